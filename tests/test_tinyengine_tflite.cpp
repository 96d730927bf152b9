// TinyEngine's own TFLite inference code generator on our int8 TFLite exports
// (runTinyEngineTfliteCodegen): mcunet-5fps with MIT's params is accepted; TinyEngine's scheduler
// plans an activation arena of 163,840 B — our inference peak, exactly — and a PEAK_MEM of 173,416 B
// with its im2col (8,712 B) and kernel (864 B) buffers;
// a file it cannot read is a refusal naming the reason, not a crash; a missing file is InputError.
// Skips with a message without ../shared/reference/runtimes or python3-flatbuffers.
#include "TestSupport.h"

#include "deploy/TfliteExport.h"
#include "deploy/TinyEngineTfliteCodegen.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/ZooCatalog.h"

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
    void mcunet5fpsIsAcceptedWithItsScheduledPeak()
    {
        REQUIRE_TINYENGINE();
        QTemporaryDir dir;
        QuantizedParams p = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        p.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
        const std::string path = (dir.path() + QStringLiteral("/mcunet-5fps.tflite")).toStdString();
        const TfliteModel m = writeTflite(path, zooModel("mcunet-5fps"), p);
        QCOMPARE(m.metadata["peak_sram_bytes"].get<long long>(), 163840LL);
        const TinyEngineTfliteReport r = runTinyEngineTfliteCodegen(path);
        QVERIFY2(r.accepted, r.refusal.c_str());
        QCOMPARE(r.activation_bytes, std::int64_t(163840));   // its scheduler's arena: our peak, exactly
        QCOMPARE(r.peak_bytes, std::int64_t(173416));         // + im2col 8,712 + kernel 864
        QCOMPARE(r.model_bytes, std::int64_t(512960));
        QVERIFY(r.generated_files > 2);   // genModel.{c,h} and the kernels it specialises
    }

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
