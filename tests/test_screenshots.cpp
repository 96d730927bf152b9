// `tinyscope-screenshots` (tests/screenshots) in the default tier: every panel after its runs with
// --no-measure (the two screenshots that measure subnets on the supernet, a minute of CPU, are the
// slow tier's: slow_screenshots), and the tool's refusals. A suite of its own, apart from test_gui,
// so that each stays well inside the watchdog on a loaded machine (issue 20: test_gui with the
// screenshots ran 300 s at load 9).
#include "ScreenshotChecks.h"
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace tinyscope;

class TestScreenshots : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void screenshotCommandWritesEveryPanel()
    {
        // Every panel after its runs; the two screenshots that measure subnets on the supernet
        // (a minute of CPU) are the slow tier's (slow_screenshots).
        QTemporaryDir dir;
        test::runAndCheckScreenshots(dir.path(), false, false);   // the teaching set: test_teaching_screenshots
        if (QTest::currentTestFailed()) return;
        // `tinyscope gui --screenshot` without a folder says what it needs (the tool itself is run
        // through it by test_teaching_screenshots).
        const test::CliRun noDir = test::runTinyscope({QStringLiteral("gui"), QStringLiteral("--screenshot")});
        QCOMPARE(noDir.code, 2);
        QVERIFY2(noDir.err.find("--screenshot needs a folder") != std::string::npos, noDir.err.c_str());
        const test::CliRun stray = test::runTinyscope({QStringLiteral("gui"), QStringLiteral("--no-measure")});
        QCOMPARE(stray.code, 2);
        QVERIFY2(stray.err.find("unknown option --no-measure") != std::string::npos, stray.err.c_str());
    }

    // The tool refuses bad options and a folder it cannot write, before any work: exit 2, one line
    // naming the option or the path.
    void screenshotToolRefusesBadInput()
    {
        QTemporaryDir dir;
        const QString file = dir.path() + QStringLiteral("/plain.txt");
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        const std::vector<std::pair<QStringList, QString>> cases = {
            {{file}, file},
            {{file + QStringLiteral("/sub")}, file + QStringLiteral("/sub")},
            {{dir.path(), QStringLiteral("--size"), QStringLiteral("1280by720")}, QStringLiteral("--size 1280by720")},
            {{dir.path(), QStringLiteral("--scale"), QStringLiteral("0")}, QStringLiteral("--scale 0")},
            {{dir.path(), QStringLiteral("--frobnicate")}, QStringLiteral("unknown option --frobnicate")},
            {{}, QStringLiteral("DIR is missing")}};
        for (const auto& [args, needle] : cases) {
            QProcess p;
            p.start(QStringLiteral(TINYSCOPE_SCREENSHOTS), args);
            QVERIFY(p.waitForFinished(60000));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(p.exitCode() == 2 && err.contains(needle) && err.count(QLatin1Char('\n')) == 1,
                     qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + err));
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList{QStringLiteral("plain.txt")});
    }

};

QTEST_MAIN(TestScreenshots)
#include "test_screenshots.moc"
