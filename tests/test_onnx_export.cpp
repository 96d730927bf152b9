// tinyscope deploy --format onnx (issue 18, docs/DEPLOY.md "ONNX"): the files pass Debian's
// onnx.checker, ONNX Runtime (npm) computes our LibTorch logits from them, and bad input is refused
// before anything is written. The full runtime sweep over both spaces is slow_onnx_runtime.
#include "OnnxSupport.h"
#include "PrunedSubnet.h"

#include "cost/CostModel.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <cmath>

using namespace tinyscope;

namespace {


std::string demoSupernet() { return (test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth")).toStdString(); }

PreparedModel seededZoo(const std::string& name, std::uint64_t seed)
{
    return prepareFloatModel(ModelSource::zoo(name, seed), QuantizeOptions{});
}

QStringList filesIn(const QString& dir) { return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot); }

}  // namespace

class TestOnnxExport : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    QString npmDir = QStringLiteral(TINYSCOPE_TEST_NPM_DIR);

private Q_SLOTS:
    void checkerAcceptsZooModelsAndSubnets()
    {
        const QString dir = tmp.path() + QStringLiteral("/checker");
        QDir().mkpath(dir);
        std::vector<std::string> files;
        for (const char* zoo : {"mcunet-5fps", "mobilenetv1-0.25", "resnet-8", "ds-cnn-s"})
            files.push_back(test::exportOnnxCase(seededZoo(zoo, 1), dir, std::string("zoo-") + zoo, 1).model);
        const DesignSpace fm = presetSpace("mcunet-fmnist");
        const Supernet demo = Supernet::load(fm, demoSupernet());
        ArchSampler fs(fm);
        files.push_back(test::exportOnnxCase(test::preparedSubnet(demo, fs.minConfig(28), "min"), dir, "fmnist-min", 2).model);
        files.push_back(test::exportOnnxCase(test::preparedSubnet(demo, fs.fullMaxConfig(36), "max"), dir, "fmnist-max", 3).model);
        if (test::haveShared()) {
            const DesignSpace vww = presetSpace("mcunet-vww");
            const Supernet net = Supernet::load(vww, test::sharedPath(test::kVwwCkpt));
            PyRandom rng(18);
            SubnetConfig c = ArchSampler(vww).random(rng);
            files.push_back(test::exportOnnxCase(test::preparedSubnet(net, c, "random"), dir, "vww-random", 4).model);
        } else {
            qWarning("../shared not found: the MCUNet-VWW subnet is not checked");
        }
        QString why;
        const std::vector<std::string> failures = test::onnxCheckerFailures(files, &why);
        if (!why.isEmpty()) QSKIP(qPrintable(why));
        for (const std::string& f : failures) qWarning("%s", f.c_str());
        QVERIFY(failures.empty());
    }

    void onnxRuntimeComputesOurLogits()
    {
        // The small case of the sweep (slow_onnx_runtime): a zoo model, one subnet at one
        // resolution and a channel-pruned subnet; logits within 1e-4 (absolute) of our LibTorch
        // float forward.
        const QString why = test::ensureOnnxRuntime(npmDir);
        if (!why.isEmpty()) QSKIP(qPrintable(why));
        const QString dir = tmp.path() + QStringLiteral("/ort");
        QDir().mkpath(dir);
        std::vector<test::OnnxCase> cases;
        cases.push_back(test::exportOnnxCase(seededZoo("mcunet-5fps", 7), dir, "mcunet-5fps", 7));
        if (test::haveShared()) {
            const DesignSpace vww = presetSpace("mcunet-vww");
            const Supernet net = Supernet::load(vww, test::sharedPath(test::kVwwCkpt));
            PyRandom rng(5);
            SubnetConfig c = ArchSampler(vww).random(rng);
            c.image_size = 112;
            cases.push_back(test::exportOnnxCase(test::preparedSubnet(net, c, "random"), dir, "vww-random-112", 8));
        } else {
            const DesignSpace fm = presetSpace("mcunet-fmnist");
            const Supernet demo = Supernet::load(fm, demoSupernet());
            PyRandom rng(5);
            cases.push_back(test::exportOnnxCase(test::preparedSubnet(demo, ArchSampler(fm).random(rng), "random"), dir,
                                                 "fmnist-random", 8));
        }
        if (!shippedSupernetPath().empty()) {   // a channel-pruned subnet saved as prune --out saves it (issue 50)
            QuantizeOptions o;
            o.bn_images = 0;
            const ModelSource pruned = test::prunedSubnetFolder(dir + QStringLiteral("/pruned"), "min", 0.3);
            cases.push_back(test::exportOnnxCase(prepareFloatModel(pruned, o), dir, "fmnist-min-pruned", 9));
        }
        const Json got = test::runOnnxRuntime(cases, npmDir, dir);
        QCOMPARE(got.size(), cases.size());
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const double d = test::maxAbsDiff(cases[i], got[i]);
            qInfo("%s: max |ONNX Runtime - LibTorch| = %.3g over %zu logits", cases[i].name.c_str(), d, cases[i].expected.size());
            QVERIFY2(d <= 1e-4, qPrintable(QString::fromStdString(cases[i].name) + QStringLiteral(": ") + QString::number(d)));
        }
    }

    void deployWritesOnnxAndReportsIt()
    {
        const QString out = tmp.path() + QStringLiteral("/cli/mcunet.onnx");
        QDir().mkpath(tmp.path() + QStringLiteral("/cli"));
        const test::CliRun r = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"),
                                                   QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--out"), out,
                                                   QStringLiteral("--board"), QStringLiteral("stm32f746"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["format"].get<std::string>(), std::string("onnx"));
        QCOMPARE(j["out"].get<std::string>(), out.toStdString());
        QCOMPARE(j["bytes"].get<qint64>(), QFileInfo(out).size());
        const Network net = zooModel("mcunet-5fps");
        QCOMPARE(j["ops"]["Conv"].get<int>(), net.numConvs());
        QCOMPARE(j["input"]["shape"], Json::array({1, 3, 128, 128}));
        QVERIFY(j["input"]["scale"].is_null() && j["input"]["zero_point"].is_null());
        QCOMPARE(j["output"]["shape"], Json::array({1, 10}));
        QVERIFY(j["output"]["scale"].is_null() && j["output"]["zero_point"].is_null());
        for (const char* key : {"input_size", "channel_order", "mean", "std", "class_labels", "subnet_config", "macs", "peak_sram_bytes", "flash_bytes"})
            QVERIFY2(j["metadata"].contains(key), key);
        QCOMPARE(j["metadata"]["macs"].get<std::string>(), std::to_string(net.macs()));
        QCOMPARE(j["metadata"]["peak_sram_bytes"].get<std::string>(), std::to_string(net.peakActivationBytes()));
        QCOMPARE(j["board_use"]["sram_bytes"].get<std::int64_t>(), net.peakActivationBytes());
        QCOMPARE(j["board_fits"].get<bool>(), net.peakActivationBytes() <= j["board"]["sram_bytes"].get<std::int64_t>());

        // A subnet of the shipped supernet (BatchNorm re-calibrated on Fashion-MNIST first): its
        // config and the cost model's figures are in the file, and the checker accepts it.
        const QString sub = tmp.path() + QStringLiteral("/cli/min.onnx");
        const test::CliRun s = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--supernet"), QString::fromStdString(demoSupernet()),
                                                   QStringLiteral("--config"), QStringLiteral("min"), QStringLiteral("--format"),
                                                   QStringLiteral("onnx"), QStringLiteral("--out"), sub, QStringLiteral("--json")});
        QVERIFY2(s.code == 0, s.err.c_str());
        const Json k = Json::parse(s.out);
        const DesignSpace fm = presetSpace("mcunet-fmnist");
        const SubnetConfig min = ArchSampler(fm).minConfig(28);
        QCOMPARE(Json::parse(k["metadata"]["subnet_config"].get<std::string>()), min.toJson());
        QCOMPARE(k["metadata"]["macs"].get<std::string>(), std::to_string(CostModel(fm).summary(min).macs));
        QCOMPARE(Json::parse(k["metadata"]["class_labels"].get<std::string>()), Json(fm.class_names));
        QCOMPARE(k["input"]["shape"], Json::array({1, 3, 28, 28}));
        QString why;
        const std::vector<std::string> failures = test::onnxCheckerFailures({sub.toStdString()}, &why);
        if (!why.isEmpty()) QSKIP(qPrintable(why));
        QVERIFY2(failures.empty(), failures.empty() ? "" : failures.front().c_str());
    }

    void inexpressibleLayerIsNamedAndNothingIsWritten()
    {
        // CCT has pooling, layer norm and attention the writer does not lower: refused by name
        // before writing, and a file already at --out stays as it was.
        const QString dir = tmp.path() + QStringLiteral("/refuse");
        QDir().mkpath(dir);
        const QString out = dir + QStringLiteral("/cct.onnx");
        writeFileAtomic(out.toStdString(), "old");
        const test::CliRun r = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--model"), QStringLiteral("cct-2/3x2"),
                                                   QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--out"), out});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        const Network cct = zooModel("cct-2/3x2");
        std::size_t first = 0;
        while (first < cct.layers.size() && (cct.layers[first].kind == LayerKind::Conv || cct.layers[first].kind == LayerKind::Add)) ++first;
        QVERIFY(first < cct.layers.size());
        const std::string expect = "cct-2/3x2: layer " + std::to_string(first) + " '" + cct.layers[first].name + "' (" +
                                   layerKindName(cct.layers[first].kind) + ")";
        QVERIFY2(r.err.find(expect) != std::string::npos, r.err.c_str());
        QCOMPARE(readFileBytes(out.toStdString()), std::string("old"));
        QCOMPARE(filesIn(dir), QStringList{QStringLiteral("cct.onnx")});

        // Weights that do not fit a layer: named too.
        PreparedModel m = seededZoo("resnet-8", 1);
        OnnxSource src = onnxSource(m);
        const int conv = m.network.convLayers()[1];
        src.weight[static_cast<std::size_t>(conv)].pop_back();
        const QString msg = test::inputErrorOf([&] { buildOnnxModel(src); });
        QVERIFY2(msg.contains(QString::fromStdString("layer " + std::to_string(conv) + " '" + m.network.layers[static_cast<std::size_t>(conv)].name + "' (Conv)")),
                 qPrintable(msg));
    }

    void deployWritesInt8TfliteWithItsJson()
    {
        // The same command, --format tflite: MIT's int8 mcunet-5fps as written by deploy/TfliteExport
        // (test_tflite_export decodes such a file against the official schema; test_tflm_runner runs it).
        REQUIRE_SHARED();
        const QString out = tmp.path() + QStringLiteral("/mcunet.tflite");
        const test::CliRun r = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl")),
                                                   QStringLiteral("--format"), QStringLiteral("tflite"), QStringLiteral("--out"), out, QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["format"].get<std::string>(), std::string("tflite"));
        QCOMPARE(j["bytes"].get<long long>(), QFileInfo(out).size());
        QCOMPARE(j["ops"]["CONV_2D"].get<int>(), 28);
        QCOMPARE(j["ops"]["DEPTHWISE_CONV_2D"].get<int>(), 14);
        QCOMPARE(j["ops"]["FULLY_CONNECTED"].get<int>(), 1);
        QCOMPARE(j["input"]["shape"], Json::parse("[1, 128, 128, 3]"));
        QCOMPARE(j["input"]["zero_point"].get<int>(), 0);
        QCOMPARE(j["output"]["shape"], Json::parse("[1, 10]"));
        QCOMPARE(j["output"]["zero_point"].get<int>(), -34);
        QVERIFY(std::fabs(j["output"]["scale"].get<double>() - 0.169803) < 1e-6);
    }

    void badOutputAndFormatAreOneLine()
    {
        const QString missing = tmp.path() + QStringLiteral("/no/such/folder/m.onnx");
        test::CliRun r = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"),
                                             QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--out"), missing});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("--out " + missing.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY(!QFileInfo::exists(tmp.path() + QStringLiteral("/no")));

        const QString out = tmp.path() + QStringLiteral("/fmt.onnx");
        r = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--format"),
                                QStringLiteral("onnx"), QStringLiteral("--int8"), QStringLiteral("--out"), out});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("--int8 with --format onnx") != std::string::npos, r.err.c_str());
        r = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--format"),
                                QStringLiteral("coreml"), QStringLiteral("--out"), out});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("--format: 'coreml'") != std::string::npos, r.err.c_str());
        QVERIFY(!QFileInfo::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestOnnxExport)
#include "test_onnx_export.moc"
