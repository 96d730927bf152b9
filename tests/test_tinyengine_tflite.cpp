// TinyEngine's own TFLite inference code generator on our int8 TFLite exports
// (runTinyEngineTfliteCodegen): a file it cannot read is a refusal naming the reason, not a crash; a
// missing file is InputError. What it accepts and the peak it schedules for mcunet-5fps (163,840 B =
// ours; PEAK_MEM 173,416 B) are checked through the three-engine comparison (test_deploy_memory).
// Skips with a message without ../shared/reference/runtimes or python3-flatbuffers.
#include "TestSupport.h"

#include "deploy/TinyEngineTfliteCodegen.h"

#include <QTemporaryDir>

using namespace tinyscope;

#define REQUIRE_TINYENGINE()                                                                                      \
    do {                                                                                                          \
        REQUIRE_SHARED();                                                                                         \
        if (tinyEngineRoot().empty()) QSKIP("../shared/reference/runtimes/tinyengine is absent");                 \
        if (const std::string pkg = missingTinyEngineTflitePackage(); !pkg.empty())                               \
            QSKIP(qPrintable(QStringLiteral("install the Debian package %1").arg(QString::fromStdString(pkg)))); \
    } while (false)

class TestTinyEngineTflite : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aFileItCannotReadIsARefusalNotACrash()
    {
        REQUIRE_TINYENGINE();
        QTemporaryDir dir;
        const QString path = dir.path() + QStringLiteral("/garbage.tflite");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(64, '\x07'));
        f.close();
        const TinyEngineTfliteReport r = runTinyEngineTfliteCodegen(path.toStdString());
        QVERIFY(!r.accepted);
        QVERIFY2(!r.refusal.empty(), "the refusal names the generator's error");
        QVERIFY2(r.refusal.find('\n') == std::string::npos, r.refusal.c_str());   // one line
        QVERIFY_THROWS_EXCEPTION(InputError, runTinyEngineTfliteCodegen((dir.path() + QStringLiteral("/missing.tflite")).toStdString()));
    }
};

QTEST_GUILESS_MAIN(TestTinyEngineTflite)
#include "test_tinyengine_tflite.moc"
