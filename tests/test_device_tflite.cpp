// `tinyscope device-run --tflite` (docs/DEVICE_RUNNER.md "A .tflite on the device"), what it checks
// before anything is built: a corrupt or truncated file, options of the other job, an unknown engine,
// a dataset that cannot be read, a missing tool — each one line and exit 2, no work folder made, no
// compiler or emulator started. The runs themselves (minutes of compiling the runtime the first time)
// are in slow_device_tflite.
#include "DeviceTestSupport.h"

#include <QProcess>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {

// A Tinyscope .tflite of the shipped supernet's smallest subnet (under a second), or "" (skipped).
QString smallModel(const QString& dir)
{
    const QString out = dir + QStringLiteral("/min.tflite");
    const test::CliRun d = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--supernet"),
                                               test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth"), QStringLiteral("--config"),
                                               QStringLiteral("min"), QStringLiteral("--format"), QStringLiteral("tflite"), QStringLiteral("--bn-images"),
                                               QStringLiteral("20"), QStringLiteral("--calib-images"), QStringLiteral("10"), QStringLiteral("--out"), out});
    if (d.code != 0) {
        QTest::qFail(d.err.c_str(), __FILE__, __LINE__);
        return {};
    }
    return out;
}

}  // namespace

class TestDeviceTflite : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aCorruptOrTruncatedFileIsRefusedBeforeAnythingIsBuilt()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString model = smallModel(dir.path());
        if (model.isEmpty()) return;
        QFile f(model);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        f.close();
        const QString keep = dir.path() + QStringLiteral("/keep");
        struct Case {
            const char* name;
            QByteArray bytes;
            const char* says;
        };
        const Case cases[] = {
            {"truncated.tflite", bytes.left(5000), "corrupt TFLite flatbuffer"},
            {"empty.tflite", QByteArray(), "0 bytes, too small for a TFLite flatbuffer"},
            {"text.tflite", QByteArray("this is not a model\n"), "TFL3"},
        };
        for (const Case& c : cases) {
            const QString path = dir.path() + QLatin1Char('/') + QLatin1String(c.name);
            test::writeFile(path, c.bytes);
            const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--tflite"), path, QStringLiteral("--keep"), keep});
            QVERIFY2(r.code == 2, (std::string(c.name) + ": " + r.err).c_str());
            QCOMPARE(test::lineCount(r.err), 1);
            QVERIFY2(r.err.find(c.says) != std::string::npos, (std::string(c.name) + ": " + r.err).c_str());
            QVERIFY2(r.err.find(c.name) != std::string::npos, r.err.c_str());   // the file is named
            QVERIFY(!QFileInfo::exists(keep));                                   // nothing was built
        }
    }

    void optionsAreCheckedFirst()
    {
        QTemporaryDir dir;
        const QString any = dir.path() + QStringLiteral("/m.tflite");
        test::writeFile(any, QByteArray("x"));
        struct Case {
            QStringList args;
            const char* says;
        };
        const Case cases[] = {
            {{QStringLiteral("--tflite"), any, QStringLiteral("--steps"), QStringLiteral("2")}, "--steps applies to --export, not to --tflite"},
            {{QStringLiteral("--tflite"), any, QStringLiteral("--export"), dir.path()}, "--export applies to --export, not to --tflite"},
            {{QStringLiteral("--tflite"), any, QStringLiteral("--engine"), QStringLiteral("cmsis")}, "engine 'cmsis': expected tflm (TFLM + CMSIS-NN), tflm-reference or tinyengine"},
            {{QStringLiteral("--export"), dir.path(), QStringLiteral("--engine"), QStringLiteral("tflm")}, "--engine applies to --tflite FILE"},
            {{QStringLiteral("--tflite"), any, QStringLiteral("--images"), QStringLiteral("0")}, "--images"},
        };
        for (const Case& c : cases) {
            const test::CliRun r = test::runTinyscope(QStringList{QStringLiteral("device-run")} + c.args);
            QVERIFY2(r.code == 2, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
            QVERIFY2(r.err.find(c.says) != std::string::npos, r.err.c_str());
        }
    }

    void aDatasetThatCannotBeReadIsNamedBeforeTheBuild()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString model = smallModel(dir.path());
        if (model.isEmpty()) return;
        const QString keep = dir.path() + QStringLiteral("/keep"), missing = dir.path() + QStringLiteral("/no-such-images");
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--tflite"), model, QStringLiteral("--data"), missing,
                                                   QStringLiteral("--keep"), keep});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("no-such-images") != std::string::npos, r.err.c_str());
        QVERIFY(!QFileInfo::exists(keep));
    }

    void aMissingToolNamesItsDebianPackage()
    {
        QTemporaryDir bin, dir;
        if (!test::linkDeviceToolsButQemu(bin.path())) QSKIP("gcc-arm-none-eabi is not installed: the case needs the cross compiler without QEMU");
        const QString any = dir.path() + QStringLiteral("/m.tflite");
        test::writeFile(any, QByteArray("x"));
        const test::CliRun q = test::runWithPath({QStringLiteral("device-run"), QStringLiteral("--tflite"), any}, bin.path());
        QCOMPARE(q.code, 2);
        QCOMPARE(test::lineCount(q.err), 1);
        QVERIFY2(q.err.find("install the Debian package qemu-system-arm") != std::string::npos, q.err.c_str());
    }

    void thePipelineRefusesABadEngineOrMissingInputs()
    {
        QTemporaryDir dir;
        const QString script = test::sourceDir() + QStringLiteral("/resources/device/run_export.sh");
        const QString any = dir.path() + QStringLiteral("/m.tflite");
        test::writeFile(any, QByteArray("x"));
        auto run = [&](const QStringList& args, bool withInputs) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(QStringLiteral("TS_INPUTS"));
            if (withInputs) env.insert(QStringLiteral("TS_INPUTS"), any);
            p.setProcessEnvironment(env);
            p.start(QStringLiteral("/bin/bash"), QStringList{script} + args);
            p.waitForFinished(60000);
            return std::make_pair(p.exitCode(), p.readAllStandardError().toStdString());
        };
        const auto bad = run({QStringLiteral("--tflite"), any, QStringLiteral("--engine"), QStringLiteral("bogus"), dir.path() + QStringLiteral("/w")}, true);
        QCOMPARE(bad.first, 2);
        QVERIFY2(bad.second.find("unknown engine 'bogus' (tflm, tflm-reference, tinyengine)") != std::string::npos, bad.second.c_str());
        const auto noInputs = run({QStringLiteral("--tflite"), any, QStringLiteral("--engine"), QStringLiteral("tflm"), dir.path() + QStringLiteral("/w")}, false);
        QCOMPARE(noInputs.first, 2);
        QVERIFY2(noInputs.second.find("--tflite needs TS_INPUTS") != std::string::npos, noInputs.second.c_str());
        const auto usage = run({QStringLiteral("--tflite"), any, dir.path() + QStringLiteral("/w")}, true);
        QCOMPARE(usage.first, 2);
        QVERIFY2(usage.second.find("usage:") != std::string::npos, usage.second.c_str());
    }
};

QTEST_MAIN(TestDeviceTflite)
#include "test_device_tflite.moc"
