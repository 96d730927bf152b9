// `cmake --install` into a temporary prefix, then the installed program run from outside the
// repository with TINYSCOPE_DATA unset: it must find its models, datasets and resources under
// <prefix>/share/tinyscope (core/io/DataPaths), not in the source tree it was built from (issue 19).
#include "TestSupport.h"

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSvgRenderer>
#include <QTemporaryDir>

using namespace tinyscope;

class TestInstall : public QObject {
    Q_OBJECT
    QTemporaryDir prefix_;
    QTemporaryDir elsewhere_;   // the working directory of the installed program

    QString at(const QString& relative) const { return prefix_.path() + QLatin1Char('/') + relative; }

    // `<prefix>/bin/tinyscope ARGS` as a user of the installed program runs it.
    test::CliRun runInstalled(const QStringList& args)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("TINYSCOPE_DATA"));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(elsewhere_.path());
        p.start(at(QStringLiteral("bin/tinyscope")), args);
        if (!p.waitForFinished(120000)) {
            p.kill();
            return {};
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput().toStdString(),
                p.readAllStandardError().toStdString()};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(prefix_.isValid() && elsewhere_.isValid());
        QVERIFY2(!elsewhere_.path().startsWith(test::sourceDir()), qPrintable(elsewhere_.path()));
        QProcess p;
        p.start(QStringLiteral(TINYSCOPE_CMAKE_COMMAND),
                {QStringLiteral("--install"), QStringLiteral(TINYSCOPE_BUILD_DIR), QStringLiteral("--prefix"), prefix_.path()});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, p.readAllStandardError().constData());
    }

    void putsEachFileWhereItIsLookedFor()
    {
        QVERIFY(QFileInfo(at(QStringLiteral("bin/tinyscope"))).isExecutable());
        for (const char* f : {"share/tinyscope/models/spaces/mcunet-fmnist.json", "share/tinyscope/models/supernets/mcunet-fmnist.pth",
                              "share/tinyscope/models/predictors/mcunet-fmnist.bin", "share/tinyscope/models/boards/stm32f746.json",
                              "share/tinyscope/datasets/mcunet-fmnist-accdata/mcunet-fmnist_shard0of1_card.json",
                              "share/tinyscope/resources/palette.json", "share/applications/tinyscope.desktop",
                              "share/icons/hicolor/scalable/apps/tinyscope.svg"})
            QVERIFY2(QFileInfo::exists(at(QLatin1String(f))), f);
        // The device pipeline is run as a program (core/device/DeviceRunner).
        QVERIFY(QFileInfo(at(QStringLiteral("share/tinyscope/resources/device/run_export.sh"))).isExecutable());
        // Only the program: no test suite, benchmark or helper program is installed; TFLM's runner
        // (deploy --compare-memory, when this build made it) where deploy/TflmRunner looks first.
        QCOMPARE(QDir(at(QStringLiteral("bin"))).entryList(QDir::Files | QDir::NoDotAndDotDot), QStringList{QStringLiteral("tinyscope")});
#ifdef TINYSCOPE_INSTALLS_TFLM_RUN
        QCOMPARE(QDir(at(QStringLiteral("libexec/tinyscope"))).entryList(QDir::Files | QDir::NoDotAndDotDot), QStringList{QStringLiteral("tflm_run")});
        QVERIFY(QFileInfo(at(QStringLiteral("libexec/tinyscope/tflm_run"))).isExecutable());
#else
        QVERIFY(!QFileInfo::exists(at(QStringLiteral("libexec"))));
#endif
    }

    void desktopEntryStartsTheGuiWithTheIcon()
    {
        QFile f(at(QStringLiteral("share/applications/tinyscope.desktop")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
        QCOMPARE(lines.value(0), QStringLiteral("[Desktop Entry]"));
        for (const char* l : {"Type=Application", "Name=Tinyscope", "Exec=tinyscope gui", "Icon=tinyscope", "Terminal=false",
                              "Categories=Development;Science;"})
            QVERIFY2(lines.contains(QLatin1String(l)), l);
    }

    // The installed icon is the one compiled into the app (resources/tinyscope.qrc) and draws.
    void iconIsTheCompiledInOne()
    {
        QFile installed(at(QStringLiteral("share/icons/hicolor/scalable/apps/tinyscope.svg")));
        QFile compiled(QStringLiteral(":/tinyscope.svg"));
        QVERIFY(installed.open(QIODevice::ReadOnly));
        QVERIFY(compiled.open(QIODevice::ReadOnly));
        QCOMPARE(installed.readAll(), compiled.readAll());
        QSvgRenderer svg(QStringLiteral(":/tinyscope.svg"));
        QVERIFY(svg.isValid());
        QCOMPARE(svg.defaultSize(), QSize(64, 64));
    }

    void installedProgramShowsASpace()
    {
        const auto r = runInstalled({QStringLiteral("space"), QStringLiteral("show"), QStringLiteral("mcunet-fmnist")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.out.rfind("mcunet-fmnist (mcunet)\n", 0) == 0, r.out.c_str());
        QVERIFY2(r.out.find("  resolutions   [28, 32, 36]\n") != std::string::npos, r.out.c_str());
        const auto vww = runInstalled({QStringLiteral("space"), QStringLiteral("show"), QStringLiteral("mcunet-vww")});
        QCOMPARE(vww.code, 0);
        QVERIFY2(vww.out.find("  resolutions   [96, 112, 128, 144, 160]\n") != std::string::npos, vww.out.c_str());
    }

    void installedProgramKnowsItsVersion()
    {
        const auto r = runInstalled({QStringLiteral("--version")});
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromStdString(r.out), QStringLiteral("tinyscope %1\n").arg(QStringLiteral(TINYSCOPE_PROJECT_VERSION)));
    }

    // The shipped predictor is read from the prefix: were the models not installed, DataPaths would
    // fall back to the source tree this binary was built from, and the path printed would say so.
    void installedProgramPredictsWithTheInstalledPredictor()
    {
        const auto r = runInstalled({QStringLiteral("predict"), QStringLiteral("--space"), QStringLiteral("mcunet-fmnist"),
                                     QStringLiteral("--random"), QStringLiteral("3")});
        QVERIFY2(r.code == 0, r.err.c_str());
        const std::string first = r.out.substr(0, r.out.find('\n'));
        const std::string expected =
            (QFileInfo(prefix_.path()).canonicalFilePath() + QStringLiteral("/share/tinyscope/models/predictors/mcunet-fmnist.bin")).toStdString();
        QVERIFY2(first.rfind("predictor MLP predictor for mcunet-fmnist", 0) == 0, first.c_str());
        QVERIFY2(first.size() > expected.size() && first.compare(first.size() - expected.size(), expected.size(), expected) == 0,
                 (first + "\n  does not end with " + expected).c_str());
        QCOMPARE(test::lineCount(r.out), 2 + 3);   // the predictor, the header, three subnets
    }
};

QTEST_MAIN(TestInstall)
#include "test_install.moc"
