// The include structure stays layered (STYLE.md: "two folders or two panels that include each other").
//
// Read: every file under core/ and ui/ of the source tree (test::sourceDir()), its #include lines, and
// the line of docs/ARCHITECTURE.md that starts with "Layer order (lowest first):" (with the lines
// after it up to the next blank line): core's folders, comma-separated, nn's subfolders as folders
// of their own ("nn" is core/nn's own files, "nn/measure" is core/nn/measure/). Then:
//  * every core folder is named once, and every name is a folder;
//  * a core file includes no folder above its own in that order ("nn/x/…" counts as nn/x, "nn/X.h" as
//    nn), and the files at core/'s top (Error.h, …) include no folder; so no two folders include each
//    other (checked on its own too, naming both directions);
//  * core/ includes nothing from ui/ or app/, no Qt header (core is Qt-free), and outside core/nn/ no
//    LibTorch or oneDNN header (tinyscope_core is torch-free; docs/ARCHITECTURE.md);
//  * ui/'s components (X.h + X.cpp) form no include cycle: X -> Y when X.h or X.cpp includes "Y.h"
//    and ui/Y.h exists; a cycle is reported with its members and the includes that close it.
// Each failure names the file, the line and both folders or files. The last function plants each kind
// of violation in a tree it writes and checks the checks report it.
#include "TestSupport.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <QStringList>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <functional>

using namespace tinyscope;

// Named, not anonymous: this file shares a unity batch with other suites (tests/CMakeLists.txt).
namespace include_layers {

const QString kOrderMarker = QStringLiteral("Layer order (lowest first):");

struct Include {
    QString file;   // relative to the root, e.g. core/nn/measure/Evaluator.cpp
    int line = 0;
    QString name;   // what is included, e.g. nn/onednn/OneDnnSubnet.h
    bool quoted = true;
    QString where() const { return QStringLiteral("%1:%2").arg(file).arg(line); }
};

QStringList sourceFiles(const QString& root, const QString& dir)
{
    QStringList out;
    QDirIterator it(root + QLatin1Char('/') + dir, {QStringLiteral("*.h"), QStringLiteral("*.hpp"), QStringLiteral("*.inl"), QStringLiteral("*.cpp"), QStringLiteral("*.c")},
                    QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) out += QDir(root).relativeFilePath(it.next());
    out.sort();
    return out;
}

QList<Include> includesOf(const QString& root, const QString& file)
{
    static const QRegularExpression re(QStringLiteral(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])"));
    QList<Include> out;
    QFile f(root + QLatin1Char('/') + file);
    if (!f.open(QIODevice::ReadOnly)) return out;
    QTextStream in(&f);
    for (int line = 1; !in.atEnd(); ++line) {
        const QRegularExpressionMatch m = re.match(in.readLine());
        if (m.hasMatch()) out += Include{file, line, m.captured(2), m.captured(1) == QLatin1String("\"")};
    }
    return out;
}

// The layer order written in ARCHITECTURE.md; empty with `error` set when the line is missing.
QStringList layerOrder(const QString& architectureMd, QString* error)
{
    QFile f(architectureMd);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = architectureMd + QStringLiteral(": cannot be read");
        return {};
    }
    QTextStream in(&f);
    in.setEncoding(QStringConverter::Utf8);
    QString text;
    bool inOrder = false;
    while (!in.atEnd()) {
        const QString line = in.readLine();
        if (!inOrder) {
            const int at = line.indexOf(kOrderMarker);
            if (at < 0) continue;
            inOrder = true;
            text = line.mid(at + kOrderMarker.size());
        } else {
            if (line.trimmed().isEmpty()) break;
            text += QLatin1Char(' ') + line;
        }
    }
    if (!inOrder) {
        *error = architectureMd + QStringLiteral(": no line starts with \"") + kOrderMarker + QStringLiteral("\"");
        return {};
    }
    QStringList order;
    for (QString name : text.split(QLatin1Char(','))) {
        name.remove(QLatin1Char('`'));
        name = name.trimmed();
        if (name.endsWith(QLatin1Char('.'))) name.chop(1);
        if (name.endsWith(QLatin1Char('/'))) name.chop(1);
        if (!name.isEmpty()) order += name;
    }
    return order;
}

// core's folders as layers: core/x -> "x", core/nn/ itself -> "nn", core/nn/y -> "nn/y".
QStringList coreFolders(const QString& root)
{
    QStringList out;
    const QDir core(root + QStringLiteral("/core"));
    for (const QString& d : core.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        out += d;
        if (d == QLatin1String("nn"))
            for (const QString& sub : QDir(core.filePath(d)).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) out += QStringLiteral("nn/") + sub;
    }
    return out;
}

// The layer of a core file ("" for core/'s own top-level files).
QString folderOfFile(const QString& file)
{
    const QStringList parts = file.split(QLatin1Char('/'));   // core/…
    if (parts.size() <= 2) return QString();
    if (parts[1] == QLatin1String("nn")) return parts.size() == 3 ? QStringLiteral("nn") : QStringLiteral("nn/") + parts[2];
    return parts[1];
}

// The core layer an include names ("" when it names none: a system header, a file beside it, core/'s top).
QString folderOfInclude(const QString& root, const Include& inc)
{
    if (!inc.quoted) return QString();
    const QStringList parts = inc.name.split(QLatin1Char('/'));
    if (parts.size() < 2 || !QFileInfo(root + QStringLiteral("/core/") + parts[0]).isDir()) return QString();
    if (parts[0] == QLatin1String("nn"))
        return parts.size() > 2 && QFileInfo(root + QStringLiteral("/core/nn/") + parts[1]).isDir() ? QStringLiteral("nn/") + parts[1] : QStringLiteral("nn");
    return parts[0];
}

struct CoreEdge {
    QString from, to;
    Include example;
};

QList<CoreEdge> coreEdges(const QString& root)
{
    QList<CoreEdge> out;
    for (const QString& file : sourceFiles(root, QStringLiteral("core"))) {
        const QString from = folderOfFile(file);
        for (const Include& inc : includesOf(root, file)) {
            const QString to = folderOfInclude(root, inc);
            if (!to.isEmpty() && to != from) out += CoreEdge{from, to, inc};
        }
    }
    return out;
}

// (a) the order names every folder once, and no file includes a folder above its own.
QStringList layerViolations(const QString& root, const QStringList& order)
{
    QStringList out;
    const QStringList folders = coreFolders(root);
    for (const QString& f : folders)
        if (!order.contains(f)) out += QStringLiteral("core folder '%1' is not in the layer order of docs/ARCHITECTURE.md (\"%2\")").arg(f, kOrderMarker);
    for (const QString& name : order) {
        if (!folders.contains(name)) out += QStringLiteral("the layer order names '%1', which is not a folder under core/").arg(name);
        if (order.count(name) > 1) out += QStringLiteral("the layer order names '%1' %2 times").arg(name).arg(order.count(name));
    }
    for (const CoreEdge& e : coreEdges(root)) {
        const QString what = QStringLiteral("%1: #include \"%2\": ").arg(e.example.where(), e.example.name);
        if (e.from.isEmpty()) {
            out += what + QStringLiteral("core/'s top-level files are the lowest layer, but this includes folder '%1'").arg(e.to);
            continue;
        }
        const qsizetype from = order.indexOf(e.from), to = order.indexOf(e.to);
        if (from >= 0 && to > from)
            out += what + QStringLiteral("folder '%1' includes folder '%2', which is above it in the layer order").arg(e.from, e.to);
    }
    return out;
}

// Two core folders that include each other, each direction with one include.
QStringList mutualFolders(const QString& root)
{
    QMap<QPair<QString, QString>, Include> first;
    for (const CoreEdge& e : coreEdges(root))
        if (!e.from.isEmpty() && !first.contains({e.from, e.to})) first.insert({e.from, e.to}, e.example);
    QStringList out;
    for (auto it = first.cbegin(); it != first.cend(); ++it) {
        const auto& [a, b] = it.key();
        if (a < b && first.contains({b, a})) {
            const Include& back = first.value({b, a});
            out += QStringLiteral("folders '%1' and '%2' include each other: %3 includes \"%4\"; %5 includes \"%6\"")
                       .arg(a, b, it.value().where(), it.value().name, back.where(), back.name);
        }
    }
    return out;
}

// (c) core/ is Qt-free, includes nothing from ui/ or app/, and only core/nn/ includes LibTorch or oneDNN.
QStringList frontEndIncludes(const QString& root)
{
    static const QRegularExpression qt(QStringLiteral(R"(^(Qt[A-Za-z]*(/.*)?|Q[A-Z][A-Za-z]*(\.h)?)$)"));
    static const QRegularExpression torch(QStringLiteral(R"(^(torch|ATen|c10|caffe2|dnnl|oneapi)[/.])"));
    QStringList out;
    for (const QString& file : sourceFiles(root, QStringLiteral("core"))) {
        const QString dir = QFileInfo(file).path();
        for (const Include& inc : includesOf(root, file)) {
            const QString what = QStringLiteral("%1: #include %2%3%4: ").arg(inc.where(), inc.quoted ? QStringLiteral("\"") : QStringLiteral("<"), inc.name,
                                                                             inc.quoted ? QStringLiteral("\"") : QStringLiteral(">"));
            if (qt.match(inc.name).hasMatch()) {
                out += what + QStringLiteral("a Qt header in core/ (core is Qt-free: docs/ARCHITECTURE.md)");
                continue;
            }
            if (torch.match(inc.name).hasMatch() && !file.startsWith(QLatin1String("core/nn/"))) {
                out += what + QStringLiteral("LibTorch / oneDNN outside core/nn/ (tinyscope_core is torch-free: docs/ARCHITECTURE.md)");
                continue;
            }
            if (!inc.quoted) continue;
            const QString head = inc.name.section(QLatin1Char('/'), 0, 0);
            if (head == QLatin1String("ui") || head == QLatin1String("app") || head == QLatin1String("cli")) {
                out += what + QStringLiteral("core/ includes from the front ends (%1/)").arg(head == QLatin1String("cli") ? QStringLiteral("app/cli") : head);
                continue;
            }
            if (inc.name.contains(QLatin1Char('/'))) continue;
            // A bare name is a file beside it or at core/'s top; otherwise it can only come from a front end.
            if (QFileInfo::exists(root + QLatin1Char('/') + dir + QLatin1Char('/') + inc.name) || QFileInfo::exists(root + QStringLiteral("/core/") + inc.name))
                continue;
            for (const QString& front : {QStringLiteral("ui"), QStringLiteral("app"), QStringLiteral("app/cli")})
                if (QFileInfo::exists(root + QLatin1Char('/') + front + QLatin1Char('/') + inc.name))
                    out += what + QStringLiteral("core/ includes %1/%2 (a front end)").arg(front, inc.name);
        }
    }
    return out;
}

// (b) include cycles among ui/'s components (strongly connected components of X -> Y).
QStringList uiCycles(const QString& root)
{
    const QDir ui(root + QStringLiteral("/ui"));
    QStringList components;
    for (const QString& f : ui.entryList({QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files)) {
        const QString c = QFileInfo(f).completeBaseName();
        if (!components.contains(c)) components += c;
    }
    QMap<QString, QMap<QString, Include>> edges;   // X -> Y -> the first include that makes it
    for (const QString& c : components)
        for (const QString& ext : {QStringLiteral(".h"), QStringLiteral(".cpp")})
            for (const Include& inc : includesOf(root, QStringLiteral("ui/") + c + ext)) {
                if (!inc.quoted || inc.name.contains(QLatin1Char('/')) || !inc.name.endsWith(QLatin1String(".h"))) continue;
                const QString to = inc.name.chopped(2);
                if (to != c && ui.exists(inc.name) && !edges[c].contains(to)) edges[c].insert(to, inc);
            }
    // Tarjan's strongly connected components.
    QMap<QString, int> index, low;
    QStringList stack;
    QSet<QString> onStack;
    QList<QStringList> sccs;
    int next = 0;
    std::function<void(const QString&)> visit = [&](const QString& v) {
        index[v] = low[v] = next++;
        stack += v;
        onStack.insert(v);
        for (auto it = edges[v].cbegin(); it != edges[v].cend(); ++it) {
            const QString& w = it.key();
            if (!index.contains(w)) {
                visit(w);
                low[v] = std::min(low[v], low[w]);
            } else if (onStack.contains(w)) {
                low[v] = std::min(low[v], index[w]);
            }
        }
        if (low[v] != index[v]) return;
        QStringList scc;
        QString w;
        do {
            w = stack.takeLast();
            onStack.remove(w);
            scc += w;
        } while (w != v);
        if (scc.size() > 1) sccs += scc;
    };
    for (const QString& c : components)
        if (!index.contains(c)) visit(c);
    QStringList out;
    for (QStringList scc : sccs) {
        scc.sort();
        QStringList why;
        for (const QString& x : scc)
            for (auto it = edges[x].cbegin(); it != edges[x].cend(); ++it)
                if (scc.contains(it.key())) why += QStringLiteral("%1 -> %2 (%3: #include \"%4\")").arg(x, it.key(), it.value().where(), it.value().name);
        out += QStringLiteral("ui components include each other in a cycle: {%1}; %2").arg(scc.join(QStringLiteral(", ")), why.join(QStringLiteral("; ")));
    }
    return out;
}

QString listed(const QStringList& problems) { return QStringLiteral("\n  ") + problems.join(QStringLiteral("\n  ")); }

void writeFile(const QString& path, const QByteArray& text)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(text);
}

bool anyContains(const QStringList& problems, const QString& text)
{
    return std::any_of(problems.cbegin(), problems.cend(), [&](const QString& p) { return p.contains(text); });
}

}  // namespace include_layers

class TestIncludeLayers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void architectureMdNamesEveryCoreFolderOnce()
    {
        using namespace include_layers;
        const QString root = test::sourceDir();
        QString error;
        const QStringList order = layerOrder(root + QStringLiteral("/docs/ARCHITECTURE.md"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(order.size() > 10, qPrintable(QStringLiteral("only %1 folders in the layer order: is the line still as the test reads it?").arg(order.size())));
        QVERIFY(order.contains(QStringLiteral("space")) && order.contains(QStringLiteral("nn/measure")));
    }

    void coreFilesIncludeOnlyFoldersBelowTheirOwn()
    {
        using namespace include_layers;
        const QString root = test::sourceDir();
        QString error;
        const QStringList order = layerOrder(root + QStringLiteral("/docs/ARCHITECTURE.md"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QStringList problems = layerViolations(root, order);
        QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1 include(s) break the layer order (%2):%3").arg(problems.size()).arg(order.join(QStringLiteral(" < ")), listed(problems))));
    }

    void noTwoCoreFoldersIncludeEachOther()
    {
        using namespace include_layers;
        const QStringList problems = mutualFolders(test::sourceDir());
        QVERIFY2(problems.isEmpty(), qPrintable(listed(problems)));
    }

    void coreIncludesNoQtNoFrontEndAndTorchOnlyInNn()
    {
        using namespace include_layers;
        const QStringList problems = frontEndIncludes(test::sourceDir());
        QVERIFY2(problems.isEmpty(), qPrintable(listed(problems)));
    }

    void uiComponentsFormNoIncludeCycle()
    {
        using namespace include_layers;
        const QString root = test::sourceDir();
        QVERIFY2(QFileInfo::exists(root + QStringLiteral("/ui/MainWindow.h")), "ui/MainWindow.h not found in the source tree");
        const QStringList problems = uiCycles(root);
        QVERIFY2(problems.isEmpty(), qPrintable(listed(problems)));
    }

    // Each check reports what it is for, in a tree with one violation of each kind.
    void theChecksFindPlantedViolations()
    {
        using namespace include_layers;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString r = dir.path();
        writeFile(r + QStringLiteral("/docs/ARCHITECTURE.md"), "# x\n\nLayer order (lowest first): io, space,\n  nn, nn/low, nn/high.\n\nmore\n");
        writeFile(r + QStringLiteral("/core/Error.h"), "#pragma once\n");
        writeFile(r + QStringLiteral("/core/io/File.h"), "#include \"Error.h\"\n#include <QString>\n");
        writeFile(r + QStringLiteral("/core/space/Space.h"), "#include \"io/File.h\"\n#include <ATen/Tensor.h>\n");
        writeFile(r + QStringLiteral("/core/space/Space.cpp"), "#include \"Space.h\"\n#include \"nn/low/Low.h\"\n#include \"Panel.h\"\n");
        writeFile(r + QStringLiteral("/core/nn/Runtime.h"), "#include <ATen/Tensor.h>\n");
        writeFile(r + QStringLiteral("/core/nn/low/Low.h"), "#include \"nn/Runtime.h\"\n");
        writeFile(r + QStringLiteral("/core/nn/low/Low.cpp"), "#include \"nn/high/High.h\"\n");
        writeFile(r + QStringLiteral("/core/nn/high/High.h"), "#include \"nn/low/Low.h\"\n");
        writeFile(r + QStringLiteral("/core/extra/Extra.h"), "#include \"ui/Panel.h\"\n");
        writeFile(r + QStringLiteral("/ui/Panel.h"), "#include \"Window.h\"\n");
        writeFile(r + QStringLiteral("/ui/Window.cpp"), "#include \"Window.h\"\n#include \"Dock.h\"\n");
        writeFile(r + QStringLiteral("/ui/Window.h"), "#pragma once\n");
        writeFile(r + QStringLiteral("/ui/Dock.cpp"), "#include \"Panel.h\"\n");
        writeFile(r + QStringLiteral("/ui/Dock.h"), "#pragma once\n");

        QString error;
        const QStringList order = layerOrder(r + QStringLiteral("/docs/ARCHITECTURE.md"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(order, (QStringList{QStringLiteral("io"), QStringLiteral("space"), QStringLiteral("nn"), QStringLiteral("nn/low"), QStringLiteral("nn/high")}));

        const QStringList layers = layerViolations(r, order);
        QVERIFY2(anyContains(layers, QStringLiteral("core folder 'extra' is not in the layer order")), qPrintable(listed(layers)));
        QVERIFY2(anyContains(layers, QStringLiteral("core/space/Space.cpp:2: #include \"nn/low/Low.h\": folder 'space' includes folder 'nn/low', which is above it")),
                 qPrintable(listed(layers)));
        QVERIFY2(anyContains(layers, QStringLiteral("core/nn/low/Low.cpp:1: #include \"nn/high/High.h\": folder 'nn/low' includes folder 'nn/high'")), qPrintable(listed(layers)));
        QVERIFY2(!anyContains(layers, QStringLiteral("core/nn/high/High.h")), qPrintable(listed(layers)));   // downwards is fine
        QVERIFY2(!anyContains(layers, QStringLiteral("core/nn/low/Low.h")), qPrintable(listed(layers)));

        const QStringList mutual = mutualFolders(r);
        QCOMPARE(mutual.size(), 1);
        QVERIFY2(mutual[0].contains(QStringLiteral("folders 'nn/high' and 'nn/low' include each other: core/nn/high/High.h:1 includes \"nn/low/Low.h\"; "
                                                   "core/nn/low/Low.cpp:1 includes \"nn/high/High.h\"")),
                 qPrintable(mutual[0]));

        const QStringList front = frontEndIncludes(r);
        QVERIFY2(anyContains(front, QStringLiteral("core/io/File.h:2: #include <QString>: a Qt header")), qPrintable(listed(front)));
        QVERIFY2(anyContains(front, QStringLiteral("core/space/Space.h:2: #include <ATen/Tensor.h>: LibTorch")), qPrintable(listed(front)));
        QVERIFY2(!anyContains(front, QStringLiteral("core/nn/Runtime.h")), qPrintable(listed(front)));
        QVERIFY2(anyContains(front, QStringLiteral("core/extra/Extra.h:1: #include \"ui/Panel.h\": core/ includes from the front ends (ui/)")), qPrintable(listed(front)));
        QVERIFY2(anyContains(front, QStringLiteral("core/space/Space.cpp:3: #include \"Panel.h\": core/ includes ui/Panel.h")), qPrintable(listed(front)));
        QCOMPARE(front.size(), 4);

        const QStringList cycles = uiCycles(r);
        QCOMPARE(cycles.size(), 1);
        QVERIFY2(cycles[0].startsWith(QStringLiteral("ui components include each other in a cycle: {Dock, Panel, Window}")), qPrintable(cycles[0]));
        QVERIFY2(cycles[0].contains(QStringLiteral("Dock -> Panel (ui/Dock.cpp:1: #include \"Panel.h\")")), qPrintable(cycles[0]));
    }
};

QTEST_GUILESS_MAIN(TestIncludeLayers)
#include "test_include_layers.moc"
