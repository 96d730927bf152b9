// Calibration images belong to the subnet's task (issue 47, workspace/CalibrationData.h): `deploy
// --space mcunet-vww` used to re-calibrate the person detector's BatchNorm on Fashion-MNIST clothing
// (the default --calib-data) without a word, and --bn-images 0 was refused. Now the rule is one
// function, and every command that calibrates applies it: a space without images of its own
// (mcunet-vww) needs --calib-data, images of another task (their class count, size or colour) are
// refused with the reason (exit 2, before the supernet is loaded), and --bn-images 0 keeps the
// checkpoint's statistics: the ONNX file then computes `tinyscope forward`'s logits. Uses ../shared's
// real-format VWW checkpoint (skipped without it) and small image folders the test writes.
#include "OnnxSupport.h"

#include "data/ImageDataset.h"
#include "io/JsonFile.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "workspace/CalibrationData.h"
#include "workspace/ShippedModels.h"

#include <QImage>
#include <QTemporaryDir>

#include <cmath>
#include <random>

using namespace tinyscope;

namespace {


// A folder of `classes` class sub-folders with `perClass` PNGs of side `side`, grey or in colour.
QString imageFolder(const QString& root, const QString& name, int classes, int perClass, int side, bool colour)
{
    const QString dir = root + QLatin1Char('/') + name;
    for (int c = 0; c < classes; ++c) {
        const QString d = dir + QStringLiteral("/class%1").arg(c);
        QDir().mkpath(d);
        for (int i = 0; i < perClass; ++i) {
            QImage img(side, side, colour ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
            for (int y = 0; y < side; ++y)
                for (int x = 0; x < side; ++x)
                    img.setPixel(x, y, colour ? qRgb((x * 7 + c * 40) % 256, (y * 5 + i * 60) % 256, (x + y) % 256)
                                              : qRgb((x + y + 30 * c) % 256, (x + y + 30 * c) % 256, (x + y + 30 * c) % 256));
            if (!img.save(d + QStringLiteral("/%1.png").arg(i))) qFatal("cannot write a test image");
        }
    }
    return dir;
}

QStringList vwwModel(const QString& ckpt, const QString& config)
{
    return {QStringLiteral("--supernet"), ckpt, QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--config"), config};
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

class TestCalibrationCli : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    QString ckpt, vwwImages, clothes, greyTwo, smallTwo, colourTen;
    QString npmDir = QStringLiteral(TINYSCOPE_TEST_NPM_DIR);

private Q_SLOTS:
    void initTestCase()
    {
        ckpt = QString::fromStdString(test::sharedPath(test::kVwwCkpt));
        vwwImages = imageFolder(tmp.path(), QStringLiteral("vww"), 2, 3, 64, true);      // the VWW task: 2 classes, colour
        clothes = imageFolder(tmp.path(), QStringLiteral("clothes"), 10, 1, 28, false);  // the Fashion-MNIST task
        greyTwo = imageFolder(tmp.path(), QStringLiteral("grey-two"), 2, 2, 64, false);
        smallTwo = imageFolder(tmp.path(), QStringLiteral("small-two"), 2, 2, 28, true);
        colourTen = imageFolder(tmp.path(), QStringLiteral("colour-ten"), 10, 1, 32, true);
    }

    void theRuleIsOneFunction()
    {
        const DesignSpace fm = presetSpace("mcunet-fmnist"), te = presetSpace("mcunet-fmnist-te"), vww = presetSpace("mcunet-vww");
        // Which data: the space's own, else none.
        QCOMPARE(chooseCalibrationData(fm, "", true), std::string("fashion-mnist:holdout"));
        QCOMPARE(chooseCalibrationData(te, "", true), std::string("fashion-mnist:holdout"));
        QCOMPARE(chooseCalibrationData(vww, "/given", true), std::string("/given"));
        QCOMPARE(ownCalibrationData(vww), std::string());
        QCOMPARE(calibrationExpectation(vww), std::string("2 classes: no person, person; colour; at least 48 px a side"));
        const std::string none = test::errorOf([&] { chooseCalibrationData(vww, "", true, {"--calib-data DATASET", "--bn-images 0"}); });
        QVERIFY2(contains(none, "space mcunet-vww has no calibration images of its own") && contains(none, "with --calib-data DATASET") &&
                     contains(none, "keep the checkpoint's BatchNorm statistics with --bn-images 0") &&
                     contains(none, calibrationExpectation(vww).c_str()),
                 none.c_str());
        // For int8 activation ranges keeping the statistics is no way out.
        const std::string int8 = test::errorOf([&] { chooseCalibrationData(vww, "", false, {"--calib-data DATASET", "--bn-images 0"}); });
        QVERIFY2(!contains(int8, "--bn-images 0") && contains(int8, "int8"), int8.c_str());

        // Whether it belongs: class count, size, colour.
        auto mismatch = [](const DesignSpace& s, const QString& data) { return calibrationMismatch(s, *openDataset(data.toStdString())); };
        QCOMPARE(mismatch(vww, vwwImages), std::string());
        QCOMPARE(mismatch(fm, clothes), std::string());
        QCOMPARE(mismatch(vww, clothes), std::string("it has 10 classes, the task 2 (no person, person)"));
        const std::string small = mismatch(vww, smallTwo);
        QVERIFY2(contains(small, "28 px on the shorter side") && contains(small, "96 px"), small.c_str());
        QCOMPARE(mismatch(vww, greyTwo), std::string("its images are grey (all 4 sampled), the task's are colour"));
        const std::string colour = mismatch(fm, colourTen);
        QVERIFY2(contains(colour, "it holds colour images") && contains(colour, "the task's are grey"), colour.c_str());
        // A space of one's own: no data of its own, its colour unknown (class count and size still apply).
        Json j = fm.toJson();
        j["name"] = "my-space";
        const DesignSpace mine = DesignSpace::fromJson(j, "my-space.json");
        QCOMPARE(ownCalibrationData(mine), std::string());
        QCOMPARE(mismatch(mine, colourTen), std::string());
        const std::string bare = test::errorOf([&] { chooseCalibrationData(mine, "", true); });
        QVERIFY2(contains(bare, "no shipped workspace has this space"), bare.c_str());
        if (!fashionMnistDir().empty()) QCOMPARE(mismatch(vww, QStringLiteral("fashion-mnist:holdout")), mismatch(vww, clothes));
        // openCalibrationData names the data, the reason and the ways out.
        const std::string open = test::errorOf([&] { openCalibrationData(vww, clothes.toStdString(), true, {"--calib-data DATASET", "--bn-images 0"}); });
        QVERIFY2(contains(open, ("calibration data " + clothes.toStdString() + " is not of space mcunet-vww's task: it has 10 classes").c_str()) &&
                     contains(open, "--bn-images 0"),
                 open.c_str());
    }

    void vwwDeployWithoutItsImagesIsRefused()
    {
        REQUIRE_SHARED();
        const QString out = tmp.path() + QStringLiteral("/refused.onnx");
        const QStringList deploy = QStringList{QStringLiteral("deploy")} + vwwModel(ckpt, QStringLiteral("max")) +
                                   QStringList{QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--out"), out};
        test::CliRun r = test::runTinyscope(deploy);
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(contains(r.err, "space mcunet-vww has no calibration images of its own") && contains(r.err, "--calib-data DATASET") &&
                     contains(r.err, "--bn-images 0"),
                 r.err.c_str());
        // Images of another task: refused with the reason (Fashion-MNIST's classes, as the old default was).
        r = test::runTinyscope(deploy + QStringList{QStringLiteral("--calib-data"), clothes});
        QCOMPARE(r.code, 2);
        QVERIFY2(contains(r.err, "it has 10 classes, the task 2 (no person, person)"), r.err.c_str());
        if (!fashionMnistDir().empty()) {
            r = test::runTinyscope(deploy + QStringList{QStringLiteral("--calib-data"), QStringLiteral("fashion-mnist:holdout")});
            QCOMPARE(r.code, 2);
            QVERIFY2(contains(r.err, "calibration data fashion-mnist:holdout is not of space mcunet-vww's task"), r.err.c_str());
        }
        // int8 TFLite: the activation ranges need the task's images even with the checkpoint's statistics.
        const QString tflite = tmp.path() + QStringLiteral("/refused.tflite");
        r = test::runTinyscope(QStringList{QStringLiteral("deploy")} + vwwModel(ckpt, QStringLiteral("min")) +
                               QStringList{QStringLiteral("--format"), QStringLiteral("tflite"), QStringLiteral("--bn-images"), QStringLiteral("0"),
                                           QStringLiteral("--out"), tflite});
        QCOMPARE(r.code, 2);
        QVERIFY2(contains(r.err, "--calib-data DATASET") && contains(r.err, "int8") && !contains(r.err, "--bn-images 0"), r.err.c_str());
        QVERIFY(!QFileInfo::exists(out) && !QFileInfo::exists(tflite));
    }

    void vwwOnnxWithTheCheckpointsStatisticsComputesForward()
    {
        REQUIRE_SHARED();
        const DesignSpace vww = presetSpace("mcunet-vww");
        PyRandom rng(47);
        SubnetConfig c = ArchSampler(vww).random(rng);
        c.image_size = 96;
        const QString cfg = tmp.path() + QStringLiteral("/vww-subnet.json");
        writeJsonFile(cfg.toStdString(), c.toJson());
        const QString out = tmp.path() + QStringLiteral("/vww.onnx");
        const test::CliRun d = test::runTinyscope(QStringList{QStringLiteral("deploy")} + vwwModel(ckpt, cfg) +
                                                  QStringList{QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--bn-images"),
                                                              QStringLiteral("0"), QStringLiteral("--out"), out, QStringLiteral("--json")});
        QVERIFY2(d.code == 0, d.err.c_str());
        const Json j = Json::parse(d.out);
        QCOMPARE(j["batchnorm"].get<std::string>(), std::string("the checkpoint's statistics"));
        QCOMPARE(j["metadata"]["batchnorm"].get<std::string>(), std::string("the checkpoint's statistics"));
        QCOMPARE(j["input"]["shape"], Json::array({1, 3, 96, 96}));

        // One seeded input; `tinyscope forward` (the extracted subnet, eval mode, no re-calibration).
        test::OnnxCase oc;
        oc.name = "vww-bn0";
        oc.model = out.toStdString();
        oc.input = (tmp.path() + QStringLiteral("/vww-input.f32")).toStdString();
        oc.shape = {1, 3, 96, 96};
        std::vector<float> x(3 * 96 * 96);
        std::mt19937 gen(47);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (float& v : x) v = normal(gen);
        writeFileAtomic(oc.input, std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float)));
        const test::CliRun f = test::runTinyscope(QStringList{QStringLiteral("forward")} + vwwModel(ckpt, cfg) +
                                                  QStringList{QStringLiteral("--input"), QString::fromStdString(oc.input), QStringLiteral("--json")});
        QVERIFY2(f.code == 0, f.err.c_str());
        const Json logits = Json::parse(f.out)["logits"];
        QCOMPARE(logits.size(), std::size_t(2));
        double scale = 1;
        for (const Json& v : logits) {
            oc.expected.push_back(v.get<float>());
            scale = std::max(scale, std::fabs(v.get<double>()));
        }
        const double tolerance = 1e-4 * scale;   // test_onnx_export's 1e-4, relative to logits beyond 1

        // The model deploy wrote, in LibTorch (BatchNorm folded, as in the file): forward's logits.
        const ModelSource spec = ModelSource::subnetByName("mcunet-vww", cfg.toStdString(), ckpt.toStdString());
        QuantizeOptions o;
        o.bn_images = 0;
        const PreparedModel m = prepareFloatModel(spec, o);
        QCOMPARE(m.batchNorm(), std::string("the checkpoint's statistics"));
        const at::Tensor y = floatForward(*m.float_model, at::from_blob(x.data(), {1, 3, 96, 96}, at::kFloat).clone()).contiguous();
        double torchDiff = 0;
        for (std::size_t i = 0; i < oc.expected.size(); ++i)
            torchDiff = std::max(torchDiff, std::fabs(static_cast<double>(y.data_ptr<float>()[i]) - oc.expected[i]));
        qInfo("max |folded LibTorch - tinyscope forward| = %.3g (logits up to %.3g)", torchDiff, scale);
        QVERIFY2(torchDiff <= tolerance, qPrintable(QString::number(torchDiff)));

        // The file itself in ONNX Runtime, when test_onnx_export has installed it (not installed here:
        // two suites installing into one folder at once would collide).
        if (!QFileInfo::exists(npmDir + QStringLiteral("/node_modules/onnxruntime-node/package.json"))) {
            qWarning("ONNX Runtime (npm onnxruntime-node, installed by test_onnx_export) is absent: the file is compared through LibTorch only");
            return;
        }
        const QString work = tmp.path() + QStringLiteral("/ort");
        QDir().mkpath(work);
        const Json got = test::runOnnxRuntime({oc}, npmDir, work);
        const double ortDiff = test::maxAbsDiff(oc, got[0]);
        qInfo("max |ONNX Runtime - tinyscope forward| = %.3g", ortDiff);
        QVERIFY2(ortDiff <= tolerance, qPrintable(QString::number(ortDiff)));
    }

    void vwwDeployOnItsTasksImagesSaysSo()
    {
        REQUIRE_SHARED();
        // Six images of the task (fewer than asked): the count reported is the count used.
        const QString out = tmp.path() + QStringLiteral("/vww-calibrated.onnx");
        const test::CliRun r = test::runTinyscope(QStringList{QStringLiteral("deploy")} + vwwModel(ckpt, QStringLiteral("min")) +
                                                  QStringList{QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--calib-data"), vwwImages,
                                                              QStringLiteral("--bn-images"), QStringLiteral("100"), QStringLiteral("--out"), out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(contains(r.out, ("  BN      re-calibrated on 6 images of " + vwwImages.toStdString() + "\n").c_str()), r.out.c_str());
    }

    void everyCommandThatCalibratesAppliesTheRule()
    {
        REQUIRE_SHARED();
        const QStringList min = vwwModel(ckpt, QStringLiteral("min"));
        const QString exportDir = tmp.path() + QStringLiteral("/export");
        struct Case {
            QStringList args;
            const char* wayOut;   // how the refusal names keeping the checkpoint's statistics ("" none: int8)
        };
        const std::vector<Case> cases = {
            {QStringList{QStringLiteral("export")} + min + QStringList{QStringLiteral("--scheme"), QStringLiteral("bias-only:2"), QStringLiteral("--out"), exportDir}, ""},
            {QStringList{QStringLiteral("quantize")} + min, ""},
            {QStringList{QStringLiteral("finetune")} + min + QStringList{QStringLiteral("--scheme"), QStringLiteral("bias-only:2"), QStringLiteral("--data"), vwwImages}, ""},
            {QStringList{QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--data"), vwwImages},
             "--no-calib"},
            {QStringList{QStringLiteral("predict"), QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--random"), QStringLiteral("3"),
                         QStringLiteral("--measure"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--supernet-space"), QStringLiteral("mcunet-vww"),
                         QStringLiteral("--data"), vwwImages},
             "--calib-images 0"},
            {QStringList{QStringLiteral("search"), QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--generations"), QStringLiteral("1"),
                         QStringLiteral("--measure"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--supernet-space"), QStringLiteral("mcunet-vww"),
                         QStringLiteral("--data"), vwwImages},
             "--calib-images 0"},
        };
        for (const Case& c : cases) {
            const std::string what = c.args.join(QLatin1Char(' ')).toStdString();
            test::CliRun r = test::runTinyscope(c.args);
            QVERIFY2(r.code == 2, (what + ": " + r.err).c_str());
            QVERIFY2(test::lineCount(r.err) == 1, (what + ": " + r.err).c_str());
            QVERIFY2(contains(r.err, "space mcunet-vww has no calibration images of its own") && contains(r.err, "--calib-data DATASET"),
                     (what + ": " + r.err).c_str());
            if (*c.wayOut) QVERIFY2(contains(r.err, c.wayOut), (what + ": " + r.err).c_str());
            // Fashion-MNIST-shaped images are not the task's either.
            r = test::runTinyscope(c.args + QStringList{QStringLiteral("--calib-data"), clothes});
            QVERIFY2(r.code == 2 && contains(r.err, "it has 10 classes, the task 2 (no person, person)"), (what + ": " + r.err).c_str());
        }
        QVERIFY(!QFileInfo::exists(exportDir));
        // With the task's images, or keeping the checkpoint's statistics, eval measures.
        test::CliRun e = test::runTinyscope({QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--space"), QStringLiteral("mcunet-vww"),
                                             QStringLiteral("--config"), QStringLiteral("min"), QStringLiteral("--data"), vwwImages, QStringLiteral("--calib-data"),
                                             vwwImages, QStringLiteral("--calib-images"), QStringLiteral("4"), QStringLiteral("--json")});
        QVERIFY2(e.code == 0, e.err.c_str());
        QCOMPARE(Json::parse(e.out)["calibration_images"].get<int>(), 4);
        e = test::runTinyscope({QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--space"), QStringLiteral("mcunet-vww"),
                                QStringLiteral("--config"), QStringLiteral("min"), QStringLiteral("--data"), vwwImages, QStringLiteral("--no-calib"), QStringLiteral("--json")});
        QVERIFY2(e.code == 0, e.err.c_str());
        QCOMPARE(Json::parse(e.out)["calibration_images"].get<int>(), 0);
    }

    void fashionMnistSubnetsKeepTheirOwnImages()
    {
        // The Fashion-MNIST spaces' own images stay the default; --bn-images 0 needs no images at all.
        const QString shipped = QString::fromStdString(shippedSupernetPath());
        if (shipped.isEmpty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        const QStringList model = {QStringLiteral("deploy"), QStringLiteral("--supernet"), shipped, QStringLiteral("--config"), QStringLiteral("min"),
                                   QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--json"), QStringLiteral("--out")};
        test::CliRun r = test::runTinyscope(model + QStringList{tmp.path() + QStringLiteral("/fm-bn0.onnx"), QStringLiteral("--bn-images"), QStringLiteral("0")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QCOMPARE(Json::parse(r.out)["batchnorm"].get<std::string>(), std::string("the checkpoint's statistics"));
        r = test::runTinyscope(model + QStringList{tmp.path() + QStringLiteral("/fm-colour.onnx"), QStringLiteral("--calib-data"), colourTen});
        QCOMPARE(r.code, 2);
        QVERIFY2(contains(r.err, "is not of space mcunet-fmnist's task: it holds colour images"), r.err.c_str());
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed: the default re-calibration is not run");
        r = test::runTinyscope(model + QStringList{tmp.path() + QStringLiteral("/fm.onnx"), QStringLiteral("--bn-images"), QStringLiteral("100")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QCOMPARE(Json::parse(r.out)["batchnorm"].get<std::string>(), std::string("re-calibrated on 100 images of fashion-mnist:holdout"));
    }
};

QTEST_GUILESS_MAIN(TestCalibrationCli)
#include "test_calibration_cli.moc"
