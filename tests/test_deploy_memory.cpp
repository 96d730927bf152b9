// One memory figure, three engines (compareDeployMemory, `tinyscope deploy --compare-memory`): the
// mcunet-5fps export with MIT's params through TensorFlow Lite Micro (tflm_run) and TinyEngine's
// TFLite code generator beside our peak, with exact figures: ours 163,840 B = TinyEngine's scheduled
// arena; TinyEngine's PEAK_MEM 173,416 B; TFLM's head 270,464 B, which is the live set during op 5
// (the PAD before blocks.1's strided depthwise conv: its input 131,072 B and the padded copy
// 139,392 B), tail 61,424 B, arena_used_bytes 331,888 B. The reasons name those figures. A missing
// engine is a row saying why, not an error; the CLI's JSON and board fit; --compare-memory with ONNX
// is refused. Skips with a message without ../shared, tflm_run or python3-flatbuffers.
#include "TestSupport.h"

#include "deploy/DeployMemory.h"
#include "deploy/TfliteExport.h"
#include "io/JsonFile.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <cstdlib>

using namespace tinyscope;

namespace {

#define REQUIRE_ENGINES()                                                                                          \
    do {                                                                                                           \
        REQUIRE_SHARED();                                                                                          \
        if (!tflmRunMissing().empty()) QSKIP(tflmRunMissing().c_str());                                            \
        if (tinyEngineRoot().empty()) QSKIP("../shared/reference/runtimes/tinyengine is absent");                  \
        if (const std::string pkg = missingTinyEngineTflitePackage(); !pkg.empty())                                \
            QSKIP(qPrintable(QStringLiteral("install the Debian package %1").arg(QString::fromStdString(pkg))));  \
    } while (false)

std::string writeMcunet5fps(const QTemporaryDir& dir)
{
    QuantizedParams p = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
    p.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
    const std::string path = (dir.path() + QStringLiteral("/mcunet-5fps.tflite")).toStdString();
    writeTflite(path, zooModel("mcunet-5fps"), p);
    return path;
}

const EngineMemoryRow& row(const std::vector<EngineMemoryRow>& rows, const std::string& engine, const std::string& figureStart)
{
    for (const auto& r : rows)
        if (r.engine == engine && r.figure.rfind(figureStart, 0) == 0) return r;
    throw std::runtime_error("no row " + engine + " / " + figureStart);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestDeployMemory : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void mcunet5fpsOnThreeEngines()
    {
        REQUIRE_ENGINES();
        QTemporaryDir dir;
        const std::string path = writeMcunet5fps(dir);
        std::vector<std::string> stages;
        JobControl job;
        job.progress = [&](std::size_t, std::size_t, const std::string& stage) { stages.push_back(stage); };
        const DeployMemoryComparison c = compareDeployMemory(path, 128 * 128 * 3, 0, 163840, 488888, job);
        QVERIFY(stages.size() >= 3);

        QVERIFY2(c.tinyengine && c.tinyengine->accepted, c.tinyengine ? c.tinyengine->refusal.c_str() : c.tinyengine_unavailable.c_str());
        QCOMPARE(c.tinyengine->activation_bytes, std::int64_t(163840));   // its scheduler's arena: our peak, exactly
        QCOMPARE(c.tinyengine->peak_bytes, std::int64_t(173416));         // + im2col 8,712 + kernel 864
        QCOMPARE(c.tinyengine->model_bytes, std::int64_t(512960));
        QVERIFY(c.tinyengine->generated_files > 2);

        QVERIFY2(c.tflm.has_value(), c.tflm_unavailable.c_str());
        const TflmRunReport& t = *c.tflm;
        QCOMPARE(t.head_bytes, std::int64_t(270464));
        QCOMPARE(t.planned_bytes, std::int64_t(270464));
        QCOMPARE(t.arena_used_bytes, std::int64_t(331888));
        QCOMPARE(t.tail_bytes, std::int64_t(61424));
        QCOMPARE(t.pad_ops, 5);
        QCOMPARE(t.ops.size(), std::size_t(57));
        // The head is exactly the live set during the first PAD of a strided depthwise conv.
        QCOMPARE(t.live_peak_bytes, std::int64_t(270464));
        QCOMPARE(t.live_peak_op, 5);
        QCOMPARE(t.live_peak_op_type, std::string("PAD"));
        QCOMPARE(t.live_at_peak.size(), std::size_t(2));
        QCOMPARE(t.live_at_peak[0].name, std::string("blocks.1.pw1"));
        QCOMPARE(t.live_at_peak[0].bytes, std::int64_t(64 * 64 * 32));
        QCOMPARE(t.live_at_peak[1].name, std::string("blocks.1.dw/pad"));
        QCOMPARE(t.live_at_peak[1].bytes, std::int64_t(66 * 66 * 32));
        QCOMPARE(t.live_bytes_per_op.size(), std::size_t(57));
        QCOMPARE(*std::max_element(t.live_bytes_per_op.begin(), t.live_bytes_per_op.end()), std::int64_t(270464));
        QCOMPARE(t.outputs.size(), std::size_t(1));
        QCOMPARE(t.outputs[0].size(), std::size_t(10));

        const auto rows = c.rows();
        QCOMPARE(rows.size(), std::size_t(6));
        QCOMPARE(*row(rows, "Tinyscope", "peak SRAM").bytes, std::int64_t(163840));
        QVERIFY(contains(row(rows, "TinyEngine", "scheduled").why, "equal to ours"));
        QVERIFY2(contains(row(rows, "TinyEngine", "PEAK_MEM").why, "9,576 B"), row(rows, "TinyEngine", "PEAK_MEM").why.c_str());
        const std::string head = row(rows, "TFLM", "head").why;
        QVERIFY2(contains(head, "+106,624 B against ours") && contains(head, "op 5 PAD") && contains(head, "blocks.1.pw1 131,072") &&
                     contains(head, "reaches that set exactly"),
                 head.c_str());
        QVERIFY2(contains(row(rows, "TFLM", "tail").why, "per-channel multipliers/shifts 52,412"), row(rows, "TFLM", "tail").why.c_str());
        QVERIFY(row(rows, "TFLM", "arena_used").total && row(rows, "Tinyscope", "peak").total && !row(rows, "TFLM", "head").total);
        const Json j = c.toJson();
        QCOMPARE(j["tflm"]["live_peak_op_type"].get<std::string>(), std::string("PAD"));
        QCOMPARE(j["rows"].size(), std::size_t(6));
    }

    void aMissingEngineIsARowNotAnError()
    {
        REQUIRE_ENGINES();
        QTemporaryDir dir;
        const std::string path = writeMcunet5fps(dir);
        qputenv("TINYSCOPE_TFLM_RUN", (dir.path() + QStringLiteral("/no-such-tflm_run")).toUtf8());
        qputenv("TINYSCOPE_SHARED", dir.path().toUtf8());   // no TinyEngine there
        const DeployMemoryComparison c = compareDeployMemory(path, 128 * 128 * 3, 0, 163840, 488888);
        qunsetenv("TINYSCOPE_TFLM_RUN");
        qunsetenv("TINYSCOPE_SHARED");
        QVERIFY(!c.tflm && !c.tinyengine);
        QVERIFY2(contains(c.tflm_unavailable, "no-such-tflm_run"), c.tflm_unavailable.c_str());
        QVERIFY2(contains(c.tinyengine_unavailable, "tinyengine"), c.tinyengine_unavailable.c_str());
        const auto rows = c.rows();
        QCOMPARE(rows.size(), std::size_t(3));
        QVERIFY(!row(rows, "TFLM", "arena_used").bytes && contains(row(rows, "TFLM", "arena_used").why, "not run: "));
    }

    void cliComparesAgainstTheBoard()
    {
        REQUIRE_ENGINES();
        QTemporaryDir dir;
        const QString out = dir.path() + QStringLiteral("/m.tflite");
        const auto r = test::runTinyscope({"deploy", "--model", "mcunet-5fps", "--params",
                                           QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl")), "--format",
                                           "tflite", "--out", out, "--board", "stm32f746", "--compare-memory", "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        const Json& rows = j["memory"]["rows"];
        QCOMPARE(rows.size(), std::size_t(6));
        for (const auto& row : rows) {
            const bool total = row["total"].get<bool>();
            QCOMPARE(row.contains("fits_board_sram"), total);
            if (total) QCOMPARE(row["fits_board_sram"].get<bool>(), row["bytes"].get<std::int64_t>() <= 320 * 1024);
        }
        QCOMPARE(rows[5]["bytes"].get<std::int64_t>(), std::int64_t(331888));
        QVERIFY(!rows[5]["fits_board_sram"].get<bool>());   // TFLM's arena exceeds the F746's 320 KiB; ours and TinyEngine's fit
        QVERIFY(rows[0]["fits_board_sram"].get<bool>() && rows[2]["fits_board_sram"].get<bool>());

        const auto onnx = test::runTinyscope({"deploy", "--model", "mcunet-5fps", "--format", "onnx", "--out", dir.path() + "/m.onnx",
                                              "--compare-memory"});
        QCOMPARE(onnx.code, 2);
        QVERIFY2(contains(onnx.err, "use it with --format tflite") && test::lineCount(onnx.err) == 1, onnx.err.c_str());
        QVERIFY(!QFileInfo::exists(dir.path() + "/m.onnx"));
    }
};

QTEST_GUILESS_MAIN(TestDeployMemory)
#include "test_deploy_memory.moc"
