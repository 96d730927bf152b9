// Slow tier: TensorFlow Lite Micro (tflm_run, built on the host from ../shared) on real Fashion-MNIST
// test images of the TFLite files deploy writes — mcunet-5fps with MIT's int8 params (1,000 images) and
// the demo supernet's max subnet with squeeze-and-excite (500 images): every image's int8 logits equal
// Int8Forward in TFLM's arithmetic (with the file's effective scales), so top-1 is equal too. Skips
// with a message without ../shared, tflm_run or the dataset. Also the smallest (96) and largest (160)
// subnets of the MCUNet-VWW space on 100 images each.
#include "TestSupport.h"

#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "deploy/TfliteExport.h"
#include "graph/ForwardLowering.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/quantize/QuantizationJob.h"
#include "tinyengine/Int8Forward.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/ZooCatalog.h"

#include <QImage>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <thread>

using namespace tinyscope;

#define REQUIRE_TFLM()                                                                                                        \
    do {                                                                                                                      \
        if (QStringLiteral(TINYSCOPE_TFLM_RUN).isEmpty() || !QFileInfo::exists(QStringLiteral(TINYSCOPE_TFLM_RUN)))              \
            QSKIP("tflm_run was not built (no ../shared/reference/runtimes/tflite-micro or libgemmlowp-dev at configure time)"); \
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");                                        \
    } while (false)

class SlowTflmTop1 : public QObject {
    Q_OBJECT

    // `count` Fashion-MNIST test images through tflm_run on `model` and through `ours`: every logit
    // vector equal, top-1 equal.
    void compareOnFashionMnist(const std::string& model, const Int8Forward& ours, int resolution, std::size_t count, const QString& dir)
    {
        const std::unique_ptr<ImageDataset> data = openDataset("fashion-mnist:test");
        std::vector<std::size_t> items(count);
        for (std::size_t i = 0; i < count; ++i) items[i] = i;
        const int R = resolution;
        const Batch b = loadBatch(*data, items, R);
        QCOMPARE(b.size(), count);
        const std::size_t per = static_cast<std::size_t>(3) * R * R;
        std::vector<std::vector<std::int8_t>> chw(count);
        QByteArray nhwc;
        for (std::size_t i = 0; i < count; ++i) {
            chw[i] = ours.quantizeInput(&b.pixels[i * per]);
            for (int y = 0; y < R; ++y)
                for (int x = 0; x < R; ++x)
                    for (int c = 0; c < 3; ++c) nhwc.append(static_cast<char>(chw[i][(static_cast<std::size_t>(c) * R + y) * R + x]));
        }
        const QString inputs = dir + QStringLiteral("/inputs.bin");
        QFile f(inputs);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(nhwc);
        f.close();

        // TFLM in its own process while the workbench computes the same images on two threads.
        QProcess tflm;
        tflm.start(QStringLiteral(TINYSCOPE_TFLM_RUN), {QString::fromStdString(model), inputs, QString::number(count)});
        std::vector<std::vector<std::int8_t>> mine(count);
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t i = next++; i < count; i = next++) mine[i] = ours.run(chw[i]);
        };
        std::thread helper(work);
        work();
        helper.join();
        QVERIFY(tflm.waitForFinished(600000));
        QVERIFY2(tflm.exitCode() == 0, tflm.readAllStandardError().constData());
        const Json j = Json::parse(tflm.readAllStandardOutput().toStdString());
        QCOMPARE(j["outputs"].size(), count);

        std::size_t equal = 0, top1Tflm = 0, top1Ours = 0;
        std::string first;
        for (std::size_t i = 0; i < count; ++i) {
            const std::vector<int> t = j["outputs"][i].get<std::vector<int>>();
            const std::vector<int> o(mine[i].begin(), mine[i].end());
            if (t == o) ++equal;
            else if (first.empty()) first = "image " + std::to_string(i) + ": TFLM " + Json(t).dump() + ", ours " + Json(o).dump();
            const auto argmax = [](const std::vector<int>& v) { return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin()); };
            top1Tflm += argmax(t) == b.labels[i];
            top1Ours += argmax(o) == b.labels[i];
        }
        qInfo("%zu Fashion-MNIST images: %zu equal; top-1 TFLM %zu, ours %zu; arena_used_bytes %lld", count, equal, top1Tflm, top1Ours,
              j["arena_used_bytes"].get<long long>());
        QVERIFY2(equal == count, first.c_str());
        QCOMPARE(top1Tflm, top1Ours);
    }

private Q_SLOTS:
    void thousandImagesGiveOurLogitsExactly()
    {
        REQUIRE_SHARED();
        REQUIRE_TFLM();
        QTemporaryDir dir;
        QuantizedParams p = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        p.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
        const Network net = zooModel("mcunet-5fps");
        const std::string model = (dir.path() + QStringLiteral("/mcunet-5fps.tflite")).toStdString();
        const TfliteModel built = writeTflite(model, net, p);
        const TrainingGraph g = lowerForward(net);
        const Int8Forward ours(g, p, Int8Arithmetic::Tflite, &built.effective_scales);
        compareOnFashionMnist(model, ours, net.input.h, 1000, dir.path());
    }

    // A design-space subnet with squeeze-and-excite (MUL) and h-sigmoid: the max subnet of the shipped
    // demo supernet, quantized as deploy does, on 500 images.
    void theDemoSupernetsMaxSubnetWithSqueezeExcite()
    {
        REQUIRE_TFLM();
        QTemporaryDir dir;
        const ModelSource spec = ModelSource::subnetByName("", "max", dataRoot() + "/models/supernets/mcunet-fmnist.pth");
        QuantizeOptions o;
        o.calib_images = 100;
        const PreparedModel pm = prepareModel(spec, o);
        int se = 0;
        for (const Layer& l : pm.network.layers) se += l.kind == LayerKind::ChannelScale;
        QVERIFY(se > 0);
        const std::string model = (dir.path() + QStringLiteral("/max.tflite")).toStdString();
        const TfliteModel built = writeTflite(model, pm.network, pm.params);
        QVERIFY(built.ops.at("MUL") == se);
        const TrainingGraph g = lowerForward(pm.network);
        const Int8Forward ours(g, pm.params, Int8Arithmetic::Tflite, &built.effective_scales);
        compareOnFashionMnist(model, ours, pm.network.input.h, 500, dir.path());
    }

    // The MCUNet-VWW space (../shared's perturbed supernet, 2 classes): its smallest subnet at 96 and
    // its largest at 160, quantized as deploy does (BN on 200 images, int8 ranges on 100) on
    // calibration images of the task's shape (the space ships none, and Fashion-MNIST's are not its
    // task's: workspace/CalibrationData.h; 2 classes of 96 px colour patterns written here), on 100
    // Fashion-MNIST images each (grey, resized: the check is equality, not accuracy).
    void theVwwSpacesSmallestAndLargestSubnets_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("resolution");
        QTest::newRow("min@96") << QStringLiteral("min") << 96;
        QTest::newRow("max@160") << QStringLiteral("max") << 160;
    }
    void theVwwSpacesSmallestAndLargestSubnets()
    {
        REQUIRE_SHARED();
        REQUIRE_TFLM();
        QFETCH(QString, config);
        QFETCH(int, resolution);
        QTemporaryDir dir;
        const ModelSource spec = ModelSource::subnetByName("mcunet-vww", config.toStdString(),
                                                           test::sharedPath("reference/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth"));
        QuantizeOptions o;
        o.bn_images = 200;
        o.calib_images = 100;
        o.calib_data = (dir.path() + QStringLiteral("/vww-calibration")).toStdString();
        for (int c = 0; c < 2; ++c) {
            const QString d = QString::fromStdString(o.calib_data) + QStringLiteral("/class%1").arg(c);
            QDir().mkpath(d);
            for (int i = 0; i < 50; ++i) {
                QImage img(96, 96, QImage::Format_RGB888);
                for (int y = 0; y < 96; ++y)
                    for (int x = 0; x < 96; ++x) img.setPixel(x, y, qRgb((x * (i + 1) + 80 * c) % 256, (y * (i + 3)) % 256, (x * y + i) % 256));
                QVERIFY(img.save(d + QStringLiteral("/%1.png").arg(i)));
            }
        }
        const PreparedModel pm = prepareModel(spec, o);
        QCOMPARE(pm.network.input.h, resolution);
        const std::string model = (dir.path() + QStringLiteral("/vww.tflite")).toStdString();
        const TfliteModel built = writeTflite(model, pm.network, pm.params);
        const TrainingGraph g = lowerForward(pm.network);
        const Int8Forward ours(g, pm.params, Int8Arithmetic::Tflite, &built.effective_scales);
        compareOnFashionMnist(model, ours, resolution, 100, dir.path());
    }
};

QTEST_GUILESS_MAIN(SlowTflmTop1)
#include "slow_tflm_top1.moc"
