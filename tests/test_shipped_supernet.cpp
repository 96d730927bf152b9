// The shipped demo supernet (models/supernets/mcunet-fmnist.pth) loads as a supernet of its space,
// and the subnet its card checks reaches the recorded top-1 on the same 1,000 test images
// (within 0.5 points); every card measurement is there and sane.
#include "TestSupport.h"

#include "data/ImageDataset.h"
#include "io/JsonFile.h"
#include "nn/measure/Evaluator.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/SpacePresets.h"

using namespace tinyscope;

class TestShippedSupernet : public QObject {
    Q_OBJECT
    const std::string stem = (test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist")).toStdString();

private Q_SLOTS:
    void cardStatesTheMeasurements()
    {
        Json card = readJsonFile(stem + ".json");
        QCOMPARE(card["space"].get<std::string>(), std::string("mcunet-fmnist"));
        QCOMPARE(card["measured"].size(), std::size_t(7));
        for (const Json& m : card["measured"]) {
            QCOMPARE(m["images"].get<int>(), 10000);
            QVERIFY(m["top1"].get<double>() > 10.0 && m["top1"].get<double>() <= 100.0);
        }
        QVERIFY(card["training_seconds"].get<double>() > 0);
        QVERIFY(card["reproduce"].get<std::string>().find("train-supernet") != std::string::npos);
    }

    void fixedSubnetReachesTheRecordedAccuracy()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
        Json card = readJsonFile(stem + ".json");
        const DesignSpace space = presetSpace("mcunet-fmnist");
        setTorchThreads(defaultBatchThreads());
        Supernet net = Supernet::load(space, stem + ".pth");
        Subnet sub = net.extract(SubnetConfig::fromJson(card["check"]["config"], space, "card check"));
        auto hold = openDataset("fashion-mnist:holdout");
        CalibrationOptions co;
        co.images = 500;
        calibrateBn(sub, *hold, co);
        sub.setFolded(true);
        auto test = openDataset("fashion-mnist:test");
        EvalResult r = evaluateTop1(sub, *test, splitIndices(1000, -1), 250);
        const double recorded = card["check"]["top1"].get<double>();
        QVERIFY2(std::fabs(r.top1 - recorded) <= 0.5, qPrintable(QStringLiteral("measured %1, card %2").arg(r.top1).arg(recorded)));
    }
};

QTEST_GUILESS_MAIN(TestShippedSupernet)
#include "test_shipped_supernet.moc"
