// The search and predictor commands as a user runs them: JSON fields, the lab's target with the
// shipped predictor, exit code 3 for impossible limits, 2 for bad input, and training a
// predictor that predict then uses.
#include "TestSupport.h"

#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "io/Text.h"
#include "predict/PredictionMetrics.h"

#include <cmath>

#include <QTemporaryDir>

using namespace tinyscope;

namespace {
using Run = test::CliRun;
}  // namespace

class TestSearchCli : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

private Q_SLOTS:
    void searchMeetsTheLabsLimitsAndAccuracy()
    {
        Run r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("60"), QStringLiteral("--sram"),
                     QStringLiteral("250"), QStringLiteral("--seed"), QStringLiteral("1"), QStringLiteral("--json"),
                     QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        Json j = Json::parse(r.out);
        const Json& best = j["best"];
        QVERIFY(best["macs"].get<long long>() <= 60000000LL);
        QVERIFY(best["peak_activation_bytes"].get<long long>() <= 250LL * 1024);
        QVERIFY(best["params"].get<long long>() > 300000);
        QVERIFY2(best["predicted_accuracy"].get<double>() >= 92.5, best.dump().c_str());
        QVERIFY(best["config"].contains("ks") && best["config"]["ks"].size() == 20);
        QCOMPARE(j["history"].size(), std::size_t(21));
        QCOMPARE(j["evaluated"]["count"].get<int>(), 1050);
        QCOMPARE(j["evaluated"]["macs"].size(), std::size_t(1050));
        QCOMPARE(j["evaluated"]["predicted_accuracy"].size(), std::size_t(1050));
        QVERIFY(j["seconds"].get<double>() > 0);
        QCOMPARE(j["constraints"], Json::parse(R"({"millionMACs": 60.0, "KBPeakMemory": 250.0})"));
        QCOMPARE(j["options"]["population_size"].get<int>(), 50);
        QVERIFY(!j["pareto"].empty());
        // The same seed gives the same subnet; --diagram draws it with its prediction and costs.
        const QString diagram = tmp.path() + QStringLiteral("/winner.dot");
        Run again = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("60"), QStringLiteral("--sram"),
                         QStringLiteral("250"), QStringLiteral("--seed"), QStringLiteral("1"), QStringLiteral("--json"),
                         QStringLiteral("--no-evaluated"), QStringLiteral("--diagram"), diagram, QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(Json::parse(again.out)["best"]["config"], best["config"]);
        QVERIFY(!Json::parse(again.out).contains("evaluated"));
        const std::string title = "predicted top-1 " + formatFixed(best["predicted_accuracy"].get<double>(), 2) + " %   MACs(M): " +
                                  formatFixed(best["macs"].get<double>() / 1e6, 2) + "  PeakMem(KB): " +
                                  formatFixed(best["peak_activation_bytes"].get<double>() / 1024, 2);
        const std::string dot = readFileBytes(diagram.toStdString());
        QVERIFY2(dot.find("label=\"" + title + "\"") != std::string::npos, (title + "\n" + dot).c_str());
    }

    void humanOutputAndRandomSearch()
    {
        Run r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--algo"), QStringLiteral("random"), QStringLiteral("--macs"),
                     QStringLiteral("40"), QStringLiteral("--flash"), QStringLiteral("600"), QStringLiteral("--population"),
                     QStringLiteral("20"), QStringLiteral("--generations"), QStringLiteral("4")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.find("random search, population 20, 4 generations, seed 0; MACs ≤ 40 M, flash ≤ 600 KB") == 0, r.out.c_str());
        QVERIFY(r.out.find("100 subnets evaluated in 5 batches") != std::string::npos);
        QVERIFY(test::lineCount(r.out) > 10);
    }

    void impossibleLimitsExitThreeWithTheSpacesMinimum()
    {
        Run r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--sram"), QStringLiteral("64"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 3);
        QCOMPARE(r.err, std::string("tinyscope search: peak SRAM ≤ 64 KB is impossible: the smallest subnet in this space needs 72 KB\n"));
        QVERIFY(r.out.empty());
    }

    void trainingBudgetLimitsTheWinnerAndExplainsTheImpossible()
    {
        auto args = [](const char* kb) {
            return QStringList{QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("60"), QStringLiteral("--sram"),
                               QStringLiteral("250"), QStringLiteral("--train-budget"), QString::fromLatin1(kb),
                               QStringLiteral("--train-scheme"), QStringLiteral("bias-only:12+pw1:3@1/4"), QStringLiteral("--seed"),
                               QStringLiteral("1"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")};
        };
        Run r = test::runTinyscope(args("200") << QStringLiteral("--json") << QStringLiteral("--no-evaluated"));
        QCOMPARE(r.code, 0);
        const Json j = Json::parse(r.out);
        const Json& t = j["best"]["training_memory"];
        QVERIFY(t["total_bytes"].get<long long>() <= 200LL * 1024);
        QCOMPARE(t["total_bytes"].get<long long>(), t["inference_peak_bytes"].get<long long>() + t["extra_bytes"].get<long long>());
        QVERIFY(j["best"]["peak_activation_bytes"].get<long long>() <= 250LL * 1024);
        QCOMPARE(j["constraint_definitions"]["KBTrainingMemory"]["pattern"].get<std::string>(), std::string("bias-only:12+pw1:3@1/4"));
        Run human = test::runTinyscope(args("200"));
        QCOMPARE(human.code, 0);
        QVERIFY2(human.out.find("training   bias-only:12+pw1:3@1/4: inference working set ") != std::string::npos, human.out.c_str());
        Run impossible = test::runTinyscope(args("100"));
        QCOMPARE(impossible.code, 3);
        QVERIFY2(impossible.err.find("training memory (bias-only:12+pw1:3@1/4) ≤ 100 KB is impossible: the smallest subnet in this "
                                     "space needs 101.657 KB (inference working set 72 KB + extra 29.657 KB)") != std::string::npos,
                 impossible.err.c_str());
        Run half = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--train-budget"), QStringLiteral("200")});
        QCOMPARE(half.code, 2);
        QVERIFY2(half.err.find("--train-budget needs --train-scheme PATTERN") != std::string::npos, half.err.c_str());
        Run bad = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--train-budget"), QStringLiteral("200"), QStringLiteral("--train-scheme"),
                       QStringLiteral("last:x")});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.find("'last:x'") != std::string::npos, bad.err.c_str());
    }

    // --train-on tinyengine: what no subnet can train exits 3 before the predictor is loaded, naming
    // the least budget or the rule; misuse exits 2 (search/TinyEngineTrainingLimit.h).
    void trainOnTinyEngineRefusesWhatCannotBeTrained()
    {
        auto te = [&](QStringList extra) {
            return test::runTinyscope(QStringList{QStringLiteral("search"), QStringLiteral("--space"), QStringLiteral("mcunet-fmnist-te")} + extra);
        };
        Run r = te({QStringLiteral("--train-on"), QStringLiteral("tinyengine"), QStringLiteral("--train-budget"), QStringLiteral("10")});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.find("no subnet of mcunet-fmnist-te can be trained on TinyEngine (stm32f746, scheme chosen per subnet) within 10 KB: "
                            "the least any needs is 11.859 KB (inference working set 11.484 KB + extra 0.375 KB of 'classifier'; the rule "
                            "that binds: the budget") != std::string::npos && test::lineCount(r.err) == 1,
                 r.err.c_str());
        r = te({QStringLiteral("--train-on"), QStringLiteral("tinyengine"), QStringLiteral("--train-budget"), QStringLiteral("500"),
                QStringLiteral("--train-scheme"), QStringLiteral("last:3")});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.find("at any budget: conv 30 (blocks.10.dw): depthwise weight update") != std::string::npos, r.err.c_str());
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--space"), QStringLiteral("mcunet-fmnist"), QStringLiteral("--train-on"),
                 QStringLiteral("tinyengine"), QStringLiteral("--train-budget"), QStringLiteral("500")});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.find("at any budget: squeeze-excite gates") != std::string::npos, r.err.c_str());
        r = te({QStringLiteral("--train-on"), QStringLiteral("tinyengine")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("--train-on tinyengine needs --train-budget KB") != std::string::npos, r.err.c_str());
        r = te({QStringLiteral("--train-on"), QStringLiteral("tflm"), QStringLiteral("--train-budget"), QStringLiteral("64")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("--train-on: expected tinyengine, got 'tflm'") != std::string::npos, r.err.c_str());
        r = te({QStringLiteral("--board"), QStringLiteral("stm32f746")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("--board applies with --train-on tinyengine") != std::string::npos, r.err.c_str());
        r = te({QStringLiteral("--train-on"), QStringLiteral("tinyengine"), QStringLiteral("--train-budget"), QStringLiteral("64"),
                QStringLiteral("--board"), QStringLiteral("no-such-board")});
        QCOMPARE(r.code, 2);
    }

    void badInputExitsTwoWithOneLine()
    {
        const std::string limits = (tmp.path() + QStringLiteral("/limits.json")).toStdString();
        writeFileAtomic(limits, R"({"millionMACs": 60, "latency": 3})");
        Run r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--constraints"), QString::fromStdString(limits)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("unknown constraint 'latency'") != std::string::npos && test::lineCount(r.err) == 1, r.err.c_str());
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--macz"), QStringLiteral("60")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.find("unknown option --macz") != std::string::npos);
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--sram"), QStringLiteral("-5")});
        QCOMPARE(r.code, 2);
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("60"), QStringLiteral("--diagram"), QStringLiteral("w.jpg")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("w.jpg: unknown drawing format '.jpg'") != std::string::npos && test::lineCount(r.err) == 1, r.err.c_str());
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--algo"), QStringLiteral("annealing")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.find("evolution or random") != std::string::npos);
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--predictor"), QStringLiteral("/nonexistent/p.bin")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("/nonexistent/p.json: predictor card not found") != std::string::npos, r.err.c_str());
    }

    void predictMeasureRanksPredictionsAgainstTheSupernet()
    {
        // Fresh draws predicted and measured on the shipped Fashion-MNIST supernet (few images, to
        // stay fast): each measurement is the evaluator's, each prediction the predictor's, and the
        // metrics are computed from those two columns.
        const QStringList draws = {QStringLiteral("--space"), QStringLiteral("mcunet-fmnist"), QStringLiteral("--random"),
                                   QStringLiteral("4"), QStringLiteral("--seed"), QStringLiteral("7")};
        const QStringList measure = {QStringLiteral("--measure"), QStringLiteral("--images"), QStringLiteral("200"),
                                     QStringLiteral("--calib-images"), QStringLiteral("100"), QStringLiteral("--json")};
        Run r = test::runTinyscope(QStringList{QStringLiteral("predict")} + draws + measure);
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        const Json& rows = j["subnets"];
        QCOMPARE(rows.size(), std::size_t(4));
        Run plain = test::runTinyscope(QStringList{QStringLiteral("predict")} + draws + QStringList{QStringLiteral("--json")});
        const Json plainJson = Json::parse(plain.out);
        const Json& predictions = plainJson["predictions"];
        std::vector<double> predicted, measured;
        for (std::size_t i = 0; i < 4; ++i) {
            QCOMPARE(rows[i]["config"], predictions[i]["config"]);
            QCOMPARE(rows[i]["predicted_accuracy"].get<double>(), predictions[i]["predicted_accuracy"].get<double>());
            predicted.push_back(rows[i]["predicted_accuracy"].get<double>());
            measured.push_back(rows[i]["measured_accuracy"].get<double>());
            const double correct = measured.back() * 2;   // of 200 images
            QCOMPARE(correct, std::round(correct));
        }
        const std::string cfg = (tmp.path() + QStringLiteral("/draw0.json")).toStdString();
        writeFileAtomic(cfg, rows[0]["config"].dump());
        Run eval = test::runTinyscope({QStringLiteral("eval"), QStringLiteral("--config"), QString::fromStdString(cfg), QStringLiteral("--images"),
                        QStringLiteral("200"), QStringLiteral("--calib-images"), QStringLiteral("100"), QStringLiteral("--json")});
        QCOMPARE(Json::parse(eval.out)["top1"].get<double>(), measured[0]);
        const Json& m = j["metrics"];
        QCOMPARE(m["count"].get<int>(), 4);
        QCOMPARE(m["kendall_tau"].get<double>(), kendallTau(predicted, measured));
        double offset = 0;
        for (std::size_t i = 0; i < 4; ++i) offset += (predicted[i] - measured[i]) / 4;
        QVERIFY(std::fabs(m["mean_offset"].get<double>() - offset) < 1e-9);
        QCOMPARE(j["transferred"].get<bool>(), false);
        // Fewer than three subnets cannot be ranked; measuring options need --measure.
        r = test::runTinyscope({QStringLiteral("predict"), QStringLiteral("--space"), QStringLiteral("mcunet-fmnist"), QStringLiteral("--random"),
                 QStringLiteral("2"), QStringLiteral("--measure"), QStringLiteral("--images"), QStringLiteral("10")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("needs at least 3 subnets to rank, got 2") != std::string::npos, r.err.c_str());
        r = test::runTinyscope({QStringLiteral("predict"), QStringLiteral("--random"), QStringLiteral("3"), QStringLiteral("--images"), QStringLiteral("10")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("--images only applies with --measure") != std::string::npos, r.err.c_str());
    }

    void predictUsesTheShippedPredictorInOneBatch()
    {
        const std::string cfgs = (tmp.path() + QStringLiteral("/two.json")).toStdString();
        writeFileAtomic(cfgs, R"([{"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 96},
                                   {"wid": 1, "ks": [7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7], "e": [6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6], "d": [2,2,2,2,2,2], "image_size": 160}])");
        Run r = test::runTinyscope({QStringLiteral("predict"), QString::fromStdString(cfgs), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        Json j = Json::parse(r.out);
        QCOMPARE(j["predictions"].size(), std::size_t(2));
        const double small = j["predictions"][0]["predicted_accuracy"].get<double>();
        const double large = j["predictions"][1]["predicted_accuracy"].get<double>();
        QVERIFY2(small > 80 && small < 90 && large > 92 && large < 96, r.out.c_str());
        QCOMPARE(j["predictions"][0]["macs"].get<long long>(), 8302128LL);
        r = test::runTinyscope({QStringLiteral("predict"), QString::fromStdString(cfgs), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.find("MLP predictor for mcunet-vww") != std::string::npos);
    }

    void trainPredictorWritesAPredictorThatPredictUses()
    {
        REQUIRE_SHARED();
        // A small dataset folder in the lab's layout: one table of 600 pairs.
        QDir().mkpath(tmp.path() + QStringLiteral("/data/src"));
        Json all = readJsonFile(test::sharedPath("reference/mcunet-vww/acc_datasets/src/OFAMCUNets_r96_gpu1_acc_table.json"));
        Json part = Json::array();
        for (std::size_t i = 0; i < 600; ++i) part.push_back(all[i]);
        writeJsonFile((tmp.path() + QStringLiteral("/data/src/small_acc_table.json")).toStdString(), part);
        const QString out = tmp.path() + QStringLiteral("/mine.bin");
        Run r = test::runTinyscope({QStringLiteral("train-predictor"), QStringLiteral("--data"), tmp.path() + QStringLiteral("/data"),
                     QStringLiteral("--out"), out, QStringLiteral("--epochs"), QStringLiteral("3"), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        Json card = Json::parse(r.out);
        QCOMPARE(card["data"]["pairs"].get<int>(), 600);
        QCOMPARE(card["data"]["validation_pairs"].get<int>(), 120);
        QCOMPARE(card["history"].size(), std::size_t(3));
        QCOMPARE(card["recipe"]["epochs"].get<int>(), 3);
        QCOMPARE(card["space"]["name"].get<std::string>(), std::string("mcunet-vww"));
        QVERIFY(r.err.find("epoch   3") != std::string::npos);
        QVERIFY(QFileInfo::exists(tmp.path() + QStringLiteral("/mine.json")));
        const std::string cfg = (tmp.path() + QStringLiteral("/one.json")).toStdString();
        writeFileAtomic(cfg, R"({"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 96})");
        r = test::runTinyscope({QStringLiteral("predict"), QStringLiteral("--predictor"), out, QString::fromStdString(cfg), QStringLiteral("--json"),
                 QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        const double acc = Json::parse(r.out)["predictions"][0]["predicted_accuracy"].get<double>();
        QVERIFY(acc > 70 && acc < 100);
        r = test::runTinyscope({QStringLiteral("train-predictor"), QStringLiteral("--data"), tmp.path() + QStringLiteral("/data"), QStringLiteral("--out"),
                 out, QStringLiteral("--schedule"), QStringLiteral("linear")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.find("schedule must be constant or cosine") != std::string::npos);
        r = test::runTinyscope({QStringLiteral("train-predictor"), QStringLiteral("--data"), tmp.path() + QStringLiteral("/nothing"), QStringLiteral("--out"), out});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.find("no such accuracy dataset") != std::string::npos);
    }

    void predictorForAnotherSpaceIsRefused()
    {
        Json space = readJsonFile((test::sourceDir() + QStringLiteral("/models/spaces/mcunet-vww.json")).toStdString());
        space["name"] = "vww-hires";
        space["resolutions"] = Json::array({176, 192, 208, 224, 240});
        const std::string path = (tmp.path() + QStringLiteral("/hires.json")).toStdString();
        writeJsonFile(path, space);
        Run r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--space"), QString::fromStdString(path), QStringLiteral("--predictor"),
                     test::sourceDir() + QStringLiteral("/models/predictors/mcunet-vww.bin")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("made for space 'mcunet-vww'") != std::string::npos, r.err.c_str());
        // Without --predictor: no shipped predictor for that space, and the message says what to do.
        r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--space"), QString::fromStdString(path)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("no predictor is shipped for space 'vww-hires'") != std::string::npos, r.err.c_str());
    }
};

QTEST_MAIN(TestSearchCli)
#include "test_search_cli.moc"
