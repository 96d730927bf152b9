// The quantize / export / inspect commands as a user runs them.
#include "TestSupport.h"

#include "io/JsonFile.h"

#include <QTemporaryDir>

using namespace tinyscope;

namespace {


}  // namespace

class TestExportCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void inspectReportsTheRealGraph()
    {
        REQUIRE_SHARED();
        const test::CliRun r = test::runTinyscope({QStringLiteral("inspect"), test::tinyengineRefPath("49kb-int8-graph.json"), QStringLiteral("--params"),
                                                   test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["ops"].get<int>(), 423);
        QCOMPARE(j["forward_ops"].get<int>(), 105);
        QCOMPARE(j["outputs"].size(), std::size_t(29));
        for (const Json& o : j["outputs"]) QVERIFY(o["output_info"].is_string());
        QCOMPARE(j["outputs"][0]["output_info"].get<std::string>(), std::string("fwd@output"));
        QCOMPARE(j["op_type_counts"]["nn.mcuconv2d"].get<int>(), 43);
        QCOMPARE(j["op_type_counts"]["strided_slice"].get<int>(), 3);
        QCOMPARE(j["n_bias_update"].get<int>(), 20);
        QCOMPARE(j["manual_weight_idx"], Json::parse("[24, 27, 30]"));
        QCOMPARE(j["weight_update_ratio"], Json::parse("[0.25, 0.5, 0.5]"));
        QCOMPARE(j["memory"]["peak_bytes"].get<long long>(), 195944LL);
        // Params without scales: the checker says the QAS scales are missing.
        QCOMPARE(j["findings"].size(), std::size_t(1));
        QCOMPARE(j["findings"][0]["rule"].get<std::string>(), std::string("missing-scales"));
        const test::CliRun withScales = test::runTinyscope({QStringLiteral("inspect"), test::tinyengineRefPath("49kb-int8-graph.json"), QStringLiteral("--params"),
                                                            test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--scales"), test::tinyengineRefPath("scale.json"), QStringLiteral("--json")});
        QVERIFY2(withScales.code == 0, withScales.err.c_str());
        QCOMPARE(Json::parse(withScales.out)["findings"].size(), std::size_t(0));
        // The text form names the scheme.
        const test::CliRun t = test::runTinyscope({QStringLiteral("inspect"), test::tinyengineRefPath("49kb-int8-graph.json")});
        QVERIFY2(t.code == 0, t.err.c_str());
        QVERIFY(t.out.find("n_bias_update 20, manual_weight_idx [24,27,30], weight_update_ratio [1/4,1/2,1/2]") != std::string::npos);
    }

    void inspectNamesTheOpOfAMalformedFile()
    {
        QTemporaryDir dir;
        const QString path = dir.path() + QStringLiteral("/bad-graph.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"([{"name": "x@0", "type": "nn.mcuconv2d", "attrs": {}, "inputs": [{"name": "input", "var_type": "parameter", "shape": [1,3,8,8], "dtype": "int9", "meta": null}], "outputs": []}])");
        f.close();
        const test::CliRun r = test::runTinyscope({QStringLiteral("inspect"), path});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("op 0") != std::string::npos && r.err.find("inputs[0].dtype") != std::string::npos, r.err.c_str());
    }

    void exportWritesTheFilesAndStrictRefuses()
    {
        REQUIRE_SHARED();
        QTemporaryDir dir;
        const QString out = dir.path() + QStringLiteral("/out");
        const test::CliRun r = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--scheme"), QStringLiteral("mcunet-5fps/49kb"),
                                                   QStringLiteral("--out"), out, QStringLiteral("--name"), QStringLiteral("49kb-int8"), QStringLiteral("--strict")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(r.out.find("checker (§9): no findings") != std::string::npos);
        for (const char* f : {"/49kb-int8-graph.json", "/49kb-int8-params.pkl", "/scale.json"}) QVERIFY(QFileInfo::exists(out + QLatin1String(f)));
        QCOMPARE(readJsonFile((out + QStringLiteral("/49kb-int8-graph.json")).toStdString()), readJsonFile(test::tinyengineRefPath("49kb-int8-graph.json").toStdString()));
        // Re-open what we wrote, with its params and scales.
        const test::CliRun i = test::runTinyscope({QStringLiteral("inspect"), out + QStringLiteral("/49kb-int8-graph.json"), QStringLiteral("--params"),
                                                   out + QStringLiteral("/49kb-int8-params.pkl"), QStringLiteral("--scales"), out + QStringLiteral("/scale.json"),
                                                   QStringLiteral("--json")});
        QVERIFY2(i.code == 0, i.err.c_str());
        QCOMPARE(Json::parse(i.out)["ops"].get<int>(), 423);
        // A scheme the kernels do not cover: --strict refuses and writes nothing.
        const QString out2 = dir.path() + QStringLiteral("/strict");
        const test::CliRun s = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--scheme"), QStringLiteral("full"), QStringLiteral("--out"), out2,
                                                   QStringLiteral("--strict")});
        QCOMPARE(s.code, 2);
        QVERIFY(s.out.find("depthwise-weight-update") != std::string::npos);
        QVERIFY2(s.err.find("--strict") != std::string::npos, s.err.c_str());
        QVERIFY(QDir(out2).entryList(QDir::Files | QDir::Hidden).isEmpty());
        // Faithful form.
        const test::CliRun f = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--scheme"), QStringLiteral("mcunet-5fps/49kb"), QStringLiteral("--out"),
                                                   dir.path() + QStringLiteral("/faithful"), QStringLiteral("--mode"), QStringLiteral("faithful"), QStringLiteral("--json")});
        QVERIFY2(f.code == 0, f.err.c_str());
        QCOMPARE(Json::parse(f.out)["mode"].get<std::string>(), std::string("faithful"));
        // A board: bias-only:41 needs 713,736 B of SRAM, more than the F746's 320 KB; --strict refuses.
        const test::CliRun b = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--scheme"), QStringLiteral("bias-only:41"), QStringLiteral("--out"),
                                                   dir.path() + QStringLiteral("/board"), QStringLiteral("--board"), QStringLiteral("stm32f746"), QStringLiteral("--json")});
        QVERIFY2(b.code == 0, b.err.c_str());
        const Json bj = Json::parse(b.out);
        QCOMPARE(bj["board"]["name"].get<std::string>(), std::string("stm32f746"));
        QCOMPARE(bj["board_use"]["sram_bytes"].get<long long>(), 713736LL);
        QCOMPARE(bj["board_fits"].get<bool>(), false);
        const test::CliRun bs = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                    test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--scheme"), QStringLiteral("bias-only:41"), QStringLiteral("--out"),
                                                    out2, QStringLiteral("--board"), QStringLiteral("stm32f746"), QStringLiteral("--strict")});
        QCOMPARE(bs.code, 2);
        QVERIFY2(bs.out.find("board-sram: stm32f746 (cortex-m7): training needs 713,736 B") != std::string::npos, bs.out.c_str());
        QVERIFY(QDir(out2).entryList(QDir::Files | QDir::Hidden).isEmpty());
        const test::CliRun unknown = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--scheme"),
                                                         QStringLiteral("full"), QStringLiteral("--out"), out2, QStringLiteral("--board"), QStringLiteral("f746")});
        QCOMPARE(unknown.code, 2);
        QVERIFY2(unknown.err.find("unknown board 'f746'") != std::string::npos, unknown.err.c_str());
        const test::CliRun bad = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--scheme"),
                                                     QStringLiteral("full"), QStringLiteral("--out"), out2, QStringLiteral("--mode"), QStringLiteral("exact")});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.find("--mode") != std::string::npos);
    }

    void quantizeReportsFloatAndInt8Top1()
    {
        REQUIRE_SHARED();
        if (!QFileInfo::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))) QSKIP("dataset-fashion-mnist is not installed");
        const test::CliRun r = test::runTinyscope({QStringLiteral("quantize"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   test::tinyengineRefPath("full-int8-params.pkl"), QStringLiteral("--images"), QStringLiteral("20"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["images"].get<int>(), 20);
        QCOMPARE(j["resolution"].get<int>(), 128);
        QVERIFY(j["from_pickle"].get<bool>());
        QVERIFY(j["float_top1"].is_number());   // scale.json beside the pickle: the dequantized float model
        QVERIFY(j["int8_top1"].get<double>() >= 0 && j["int8_top1"].get<double>() <= 100);
        QVERIFY(j["agreement"].get<double>() >= 0 && j["agreement"].get<double>() <= 100);
        const test::CliRun none = test::runTinyscope({QStringLiteral("quantize"), QStringLiteral("--images"), QStringLiteral("5")});
        QCOMPARE(none.code, 2);
        QVERIFY(none.err.find("--model") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestExportCli)
#include "test_export_cli.moc"
