// The shipped supernets (models/supernets/mcunet-fmnist.pth and the TinyEngine-trainable
// mcunet-fmnist-te.pth) load as supernets of their spaces, and the subnet each card checks reaches
// the recorded top-1 on the same 1,000 test images (within 0.5 points); every card measurement is
// there and sane, and the card's reproduce line names its space when it is not the default.
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
    static std::string stemOf(const QString& space)
    {
        return (test::sourceDir() + QStringLiteral("/models/supernets/") + space).toStdString();
    }

private Q_SLOTS:
    void cardStatesTheMeasurements_data() { spaces(); }
    void cardStatesTheMeasurements()
    {
        QFETCH(QString, space);
        const std::string stem = stemOf(space);
        Json card = readJsonFile(stem + ".json");
        QCOMPARE(card["space"].get<std::string>(), space.toStdString());
        QCOMPARE(card["measured"].size(), std::size_t(7));
        for (const Json& m : card["measured"]) {
            QCOMPARE(m["images"].get<int>(), 10000);
            QVERIFY(m["top1"].get<double>() > 10.0 && m["top1"].get<double>() <= 100.0);
        }
        QVERIFY(card["training_seconds"].get<double>() > 0);
        QVERIFY(card["reproduce"].get<std::string>().find("train-supernet") != std::string::npos);
        if (space != QLatin1String(defaultSpaceName()))
            QVERIFY(card["reproduce"].get<std::string>().find("--space " + space.toStdString()) != std::string::npos);
    }

    void fixedSubnetReachesTheRecordedAccuracy_data() { spaces(); }
    void fixedSubnetReachesTheRecordedAccuracy()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
        QFETCH(QString, space);
        const std::string stem = stemOf(space);
        Json card = readJsonFile(stem + ".json");
        const DesignSpace designSpace = presetSpace(space.toStdString());
        setTorchThreads(defaultBatchThreads());
        Supernet net = Supernet::load(designSpace, stem + ".pth");
        Subnet sub = net.extract(SubnetConfig::fromJson(card["check"]["config"], designSpace, "card check"));
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

private:
    static void spaces()
    {
        QTest::addColumn<QString>("space");
        QTest::newRow("mcunet-fmnist") << QStringLiteral("mcunet-fmnist");
        QTest::newRow("mcunet-fmnist-te") << QStringLiteral("mcunet-fmnist-te");
    }
};

QTEST_GUILESS_MAIN(TestShippedSupernet)
#include "test_shipped_supernet.moc"
