// The lab's accuracy dataset: 50,000 real pairs, the lab's base accuracy and split, the
// once-for-all acc.dict form, and malformed entries reported with file and index.
#include "TestSupport.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "predict/AccuracyDataset.h"
#include "space/SpacePresets.h"

#include <QTemporaryDir>

#include <set>

using namespace tinyscope;

namespace {
const char* kConfig = R"({"wid": 1, "ks": [7,7,7,5,7,5,7,3,3,5,5,3,7,7,7,3,5,3,3,5], "e": [6,4,3,4,6,3,3,6,6,4,4,3,3,4,4,4,4,3,6,6], "d": [1,2,1,0,2,0], "image_size": 96})";

}  // namespace

class TestAccuracyDataset : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");
    QTemporaryDir tmp;

    std::string write(const QString& rel, const std::string& text)
    {
        const QString path = tmp.path() + QLatin1Char('/') + rel;
        QDir().mkpath(QFileInfo(path).path());
        writeFileAtomic(path.toStdString(), text);
        return path.toStdString();
    }

private Q_SLOTS:
    void readsTheLabsFiftyThousandPairs()
    {
        REQUIRE_SHARED();
        AccuracyDataset ds = AccuracyDataset::load(test::sharedPath("reference/mcunet-vww/acc_datasets"), space);
        QCOMPARE(ds.size(), std::size_t(50000));
        QCOMPARE(ds.files().size(), std::size_t(40));
        // Files in name order, entries in file order.
        QVERIFY(QString::fromStdString(ds.files().front()).endsWith(QStringLiteral("OFAMCUNets_r112_gpu0_acc_table.json")));
        QCOMPARE(ds.samples().front().top1, 90.24571852164459);
        QCOMPARE(ds.samples()[1249].top1, 88.3593943565825);
        QCOMPARE(ds.samples().front().config.image_size, 112);
        // The lab's base_acc: the mean of all labels as fractions.
        QCOMPARE(ds.meanLabel(), 0.9025509749960894);
    }

    void theLabsDataNeverUsesTheFullWidth()
    {
        REQUIRE_SHARED();
        AccuracyDataset ds = AccuracyDataset::load(test::sharedPath("reference/mcunet-vww/acc_datasets"), space);
        std::vector<std::size_t> all(ds.size());
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
        ArchEncoder enc(space);
        // wid = 2 is encoder position 5 + 2: never 1 in the lab's data (its sampler draws wid from {0, 1}).
        QCOMPARE(ds.unseenFeatures(enc, all), std::vector<int>{7});
    }

    void splitIsPythonsShuffleThenTheLastFifth()
    {
        REQUIRE_SHARED();
        AccuracyDataset ds = AccuracyDataset::load(test::sharedPath("reference/mcunet-vww/acc_datasets"), space);
        DatasetSplit s = ds.split(0.2, 0);
        QCOMPARE(s.train.size(), std::size_t(40000));
        QCOMPARE(s.validation.size(), std::size_t(10000));
        // python3 -c "import random; i=list(range(50000)); random.seed(0); random.shuffle(i); print(i[:3], i[-3:])"
        QCOMPARE(s.train[0], std::size_t(6690));
        QCOMPARE(s.train[1], std::size_t(6328));
        QCOMPARE(s.train[2], std::size_t(33879));
        QCOMPARE(s.validation[9997], std::size_t(27562));
        QCOMPARE(s.validation[9999], std::size_t(25247));
        std::set<std::size_t> seen(s.train.begin(), s.train.end());
        seen.insert(s.validation.begin(), s.validation.end());
        QCOMPARE(seen.size(), std::size_t(50000));
        QVERIFY(ds.split(0.2, 1).train[0] != s.train[0]);
    }

    void featuresAreTheEncodersOneHot()
    {
        AccuracyDataset ds = AccuracyDataset::fromJson(Json::parse(std::string("[[") + kConfig + ", 87.5]]"), space, "mem");
        ArchEncoder enc(space);
        std::vector<float> x = ds.features(enc, {0});
        QCOMPARE(x.size(), std::size_t(128));
        QCOMPARE(x, enc.encode(ds.samples()[0].config));
        QCOMPARE(ds.labels({0}), std::vector<float>{0.875f});
    }

    void accDictIsReadInsteadOfTheTables()
    {
        // once-for-all's merged form: {"<json config>": top1}; when present the lab reads only it.
        Json dict = Json::object();
        dict[Json::parse(kConfig).dump()] = 91.25;
        write(QStringLiteral("dictset/acc.dict"), dict.dump());
        write(QStringLiteral("dictset/src/a_acc_table.json"), std::string("[[") + kConfig + ", 50], [" + kConfig + ", 60]]");
        AccuracyDataset ds = AccuracyDataset::load((tmp.path() + QStringLiteral("/dictset")).toStdString(), space);
        QCOMPARE(ds.size(), std::size_t(1));
        QCOMPARE(ds.samples()[0].top1, 91.25);
        // The lab's merged list form is accepted as acc.dict too.
        write(QStringLiteral("listset/acc.dict"), std::string("[[") + kConfig + ", 50], [" + kConfig + ", 60]]");
        QCOMPARE(AccuracyDataset::load((tmp.path() + QStringLiteral("/listset")).toStdString(), space).size(), std::size_t(2));
    }

    void malformedEntriesNameFileAndIndex()
    {
        const std::string good = std::string("[") + kConfig + ", 88.0]";
        std::string bad = write(QStringLiteral("bad1/src/x_acc_table.json"), "[" + good + ", " + good + ", [1, 2, 3]]");
        std::string msg = test::errorOf([&] { AccuracyDataset::load((tmp.path() + QStringLiteral("/bad1")).toStdString(), space); });
        QVERIFY2(msg.find(bad) != std::string::npos && msg.find("[2]") != std::string::npos &&
                     msg.find("expected a pair [config, top1]") != std::string::npos, msg.c_str());

        std::string cfg = kConfig;
        cfg.replace(cfg.find("\"image_size\": 96"), 16, "\"image_size\": 97");
        bad = write(QStringLiteral("bad2.json"), "[" + good + ", [" + cfg + ", 80]]");
        msg = test::errorOf([&] { AccuracyDataset::load(bad, space); });
        QVERIFY2(msg.find("bad2.json: [1][0]") != std::string::npos && msg.find("image_size") != std::string::npos &&
                     msg.find("97") != std::string::npos, msg.c_str());

        bad = write(QStringLiteral("bad3.json"), "[" + good + ", [" + kConfig + ", 180]]");
        msg = test::errorOf([&] { AccuracyDataset::load(bad, space); });
        QVERIFY2(msg.find("[1][1]") != std::string::npos && msg.find("0..100") != std::string::npos, msg.c_str());

        bad = write(QStringLiteral("bad4.json"), "[" + good + ",");
        msg = test::errorOf([&] { AccuracyDataset::load(bad, space); });
        QVERIFY2(msg.find("bad4.json: line 1") != std::string::npos, msg.c_str());

        msg = test::errorOf([&] { AccuracyDataset::load((tmp.path() + QStringLiteral("/nothing-here")).toStdString(), space); });
        QVERIFY2(msg.find("no such accuracy dataset") != std::string::npos, msg.c_str());
        QDir().mkpath(tmp.path() + QStringLiteral("/empty"));
        msg = test::errorOf([&] { AccuracyDataset::load((tmp.path() + QStringLiteral("/empty")).toStdString(), space); });
        QVERIFY2(msg.find("expected acc.dict or src/*_acc_table.json") != std::string::npos, msg.c_str());
    }
};

QTEST_MAIN(TestAccuracyDataset)
#include "test_accuracy_dataset.moc"
