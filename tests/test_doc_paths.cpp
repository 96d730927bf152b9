// Every repository path the docs name exists (issue 49: docs as reference).
//
// Read: docs/*.md, README.md and tests/README.md of the source tree (test::sourceDir()).
// A path is a word that starts with one of the top-level folders tests/, core/, ui/, app/, bench/,
// resources/, models/, datasets/ or docs/ and runs on over letters, digits and `_ . - / + , { } < > *`
// and `…`. It must not follow a letter, digit, `_`, `.`, `-` or `/`, so `../shared/…` (the reference
// material beside the repository, not checked) and build outputs such as `build/bench/bench_x` are
// not taken for repository paths. Trailing `. , ; : )` are sentence punctuation and dropped.
// Then:
//  * brace groups are expanded, `core/nn/onednn/{StemConv,DepthwiseConv}.h` → two paths (nested
//    one group after another, not nested); a group that does not close is checked as written;
//  * a name with `<`, `*` or `…` is a placeholder or a glob (`core/nn/<domain>/X.h`, `models/*.json`,
//    `tests/…`) and is skipped;
//  * the path must exist as a file or a folder, or — when its last part has no extension — as the
//    stem of a file beside it (`core/cost/SubnetComparison` for SubnetComparison.h / .cpp,
//    `bench/bench_finetune` for the program built from bench/bench_finetune.cpp).
// The failure lists every missing path with its file and line.
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QStringList>
#include <QTextStream>

using namespace tinyscope;

namespace {

// `a{b,c}d{e,f}` → abde, abdf, acde, acdf.
QStringList expandBraces(const QString& path)
{
    const int close = path.indexOf(QLatin1Char('}'));
    const int open = close < 0 ? -1 : path.lastIndexOf(QLatin1Char('{'), close);
    if (open < 0) return {path};
    QStringList out;
    const QString head = path.left(open), tail = path.mid(close + 1);
    for (const QString& alt : path.mid(open + 1, close - open - 1).split(QLatin1Char(',')))
        out += expandBraces(head + alt + tail);
    return out;
}

// The repository paths named in `text`, expanded, placeholders and globs left out.
QStringList pathsIn(const QString& text)
{
    static const QRegularExpression word(
        QStringLiteral("(?<![A-Za-z0-9_./\\-])((?:tests|core|ui|app|bench|resources|models|datasets|docs)/"
                       "[A-Za-z0-9_.\\-/+,{}<>*\u2026]*)"));
    static const QRegularExpression trailing(QStringLiteral("[.,;:)]+$"));
    QStringList out;
    auto it = word.globalMatch(text);
    while (it.hasNext()) {
        QString path = it.next().captured(1);
        path.remove(trailing);
        for (QString p : expandBraces(path)) {
            p.remove(trailing);
            if (p.contains(QLatin1Char('<')) || p.contains(QLatin1Char('*')) || p.contains(QChar(0x2026))) continue;
            out += p;
        }
    }
    return out;
}

// A file or folder, or the stem of a file beside it when the last part has no extension.
bool existsInTree(const QString& root, const QString& path)
{
    const QFileInfo info(root + QLatin1Char('/') + path);
    if (info.exists()) return true;
    if (path.endsWith(QLatin1Char('/')) || info.fileName().contains(QLatin1Char('.'))) return false;
    return !info.dir().entryList({info.fileName() + QStringLiteral(".*")}, QDir::Files).isEmpty();
}

} // namespace

class TestDocPaths : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void pathsAreReadAsTheHeaderSays()
    {
        QCOMPARE(pathsIn(QStringLiteral("see `core/nn/onednn/{StemConv,DepthwiseConv}.h`.")),
                 (QStringList{QStringLiteral("core/nn/onednn/StemConv.h"), QStringLiteral("core/nn/onednn/DepthwiseConv.h")}));
        QCOMPARE(pathsIn(QStringLiteral("(tests/test_cli.cpp), docs/SEARCH.md: and ui/.")),
                 (QStringList{QStringLiteral("tests/test_cli.cpp"), QStringLiteral("docs/SEARCH.md"), QStringLiteral("ui/")}));
        QCOMPARE(pathsIn(QStringLiteral("core/nn/<domain>/X.h models/*.json tests/\u2026 ../shared/reference/models/a "
                                        "build/bench/bench_x SHARED/core/y")),
                 QStringList());
        QCOMPARE(pathsIn(QStringLiteral("a/{b,c}/core/z core/{a,b}/{c,d}.h")),
                 (QStringList{QStringLiteral("core/a/c.h"), QStringLiteral("core/a/d.h"), QStringLiteral("core/b/c.h"),
                              QStringLiteral("core/b/d.h")}));
        const QString root = test::sourceDir();
        QVERIFY(existsInTree(root, QStringLiteral("core/cost/SubnetComparison")));     // .h / .cpp beside it
        QVERIFY(existsInTree(root, QStringLiteral("tests/")));
        QVERIFY(!existsInTree(root, QStringLiteral("tests/test_data_loss.cpp")));
        QVERIFY(!existsInTree(root, QStringLiteral("core/cost/SubnetCompar")));
    }

    void everyPathNamedInTheDocsExists()
    {
        const QString root = test::sourceDir();
        QStringList docs;
        for (const QString& name : QDir(root + QStringLiteral("/docs")).entryList({QStringLiteral("*.md")}, QDir::Files))
            docs += QStringLiteral("docs/") + name;
        docs += {QStringLiteral("README.md"), QStringLiteral("tests/README.md")};
        QVERIFY2(docs.size() > 3, "no docs/*.md found in the source tree");

        QStringList missing;
        int checked = 0;
        for (const QString& doc : docs) {
            QFile file(root + QLatin1Char('/') + doc);
            QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(doc));
            QTextStream in(&file);
            in.setEncoding(QStringConverter::Utf8);
            for (int line = 1; !in.atEnd(); ++line) {
                for (const QString& path : pathsIn(in.readLine())) {
                    ++checked;
                    if (!existsInTree(root, path)) missing += QStringLiteral("%1:%2: %3").arg(doc).arg(line).arg(path);
                }
            }
        }
        QVERIFY2(checked > 100, qPrintable(QStringLiteral("only %1 paths found: is the pattern still right?").arg(checked)));
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 of %2 paths named in the docs do not exist:\n  %3")
                                                   .arg(missing.size()).arg(checked).arg(missing.join(QStringLiteral("\n  ")))));
    }
};

QTEST_GUILESS_MAIN(TestDocPaths)
#include "test_doc_paths.moc"
