// The search under a fine-tuning memory budget (search/TrainingMemoryLimit.h): every subnet it
// returns or evaluates meets both the inference limits and "inference peak + extra memory of the
// pattern <= budget" (checked with the independent full pricing of graph/TrainingBudget.h), the
// budget binds, an impossible budget is refused at once with the space's exact minimum and its
// breakdown, and a stored result restores its limits, pattern included.
#include "TestSupport.h"

#include "Error.h"
#include "graph/TrainingBudget.h"
#include "search/ArchitectureSearch.h"
#include "search/Feasibility.h"
#include "search/SearchResult.h"
#include "search/TrainingMemoryLimit.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

using namespace tinyscope;

namespace {

// Bigger is better: pushes the search against every memory limit, so a limit that does not hold
// shows up in the winner.
class MacsOracle : public AccuracyOracle {
public:
    std::vector<double> predict(const std::vector<SubnetConfig>& configs) override
    {
        std::vector<double> out;
        for (const SubnetConfig& c : configs) out.push_back(static_cast<double>(c.image_size) + c.wid + c.ks[0] * 0.01 + c.e[5] * 0.1);
        return out;
    }
    std::string describe() const override { return "image size + width + a little kernel and expand"; }
};

constexpr const char* kPattern = "bias-only:12+pw1:3@1/4";

Constraints labLimits()
{
    Constraints c;
    c.set("millionMACs", 60);
    c.set("KBPeakMemory", 250);
    return c;
}

std::int64_t trainingTotal(const DesignSpace& s, const SubnetConfig& c, const char* pattern = kPattern)
{
    return trainingBudgetCost(s, c, TrainingSchemePattern::parse(pattern)).totalBytes();
}

}  // namespace

class TestTrainingBudgetSearch : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");

private Q_SLOTS:
    void everySubnetMeetsTheInferenceLimitsAndTheTrainingBudget()
    {
        for (const char* algo : {"evolution", "random"}) {
            Constraints c = labLimits();
            TrainingMemoryLimit limit(space, kPattern);
            c.set(limit.quantity(), 200);
            MacsOracle oracle;
            SearchOptions o;
            o.algorithm = algo;
            o.seed = 3;
            const SearchResult r = runSearch(space, oracle, c, o);
            QVERIFY(r.found);
            QCOMPARE(r.evaluated.size(), std::size_t(50 * 21));
            for (const SearchCandidate& s : r.evaluated) {
                QVERIFY(s.cost.macs <= 60000000);
                QVERIFY(s.cost.peak_activation_bytes <= 250 * 1024);
                QVERIFY2(trainingTotal(space, s.config) <= 200 * 1024, s.config.toJson().dump().c_str());
            }
            // The winner's report is the full pricing's numbers, to the byte.
            const Json& t = r.best_reports[TrainingMemoryLimit::kReportKey];
            const TrainingBudgetCost full = trainingBudgetCost(space, r.best.config, TrainingSchemePattern::parse(kPattern));
            QCOMPARE(t["pattern"].get<std::string>(), std::string(kPattern));
            QCOMPARE(t["inference_peak_bytes"].get<std::int64_t>(), full.inference_peak_bytes);
            QCOMPARE(t["extra_bytes"].get<std::int64_t>(), full.extra_bytes);
            QCOMPARE(t["total_bytes"].get<std::int64_t>(), full.totalBytes());
            QCOMPARE(t["budget_bytes"].get<std::int64_t>(), std::int64_t(200 * 1024));
            QVERIFY(limit.memoised() > 0);
            // The JSON result carries the report and the pattern beside the limits.
            const Json j = toJson(r, false);
            QCOMPARE(j["best"][TrainingMemoryLimit::kReportKey], t);
            QCOMPARE(j["constraints"][TrainingMemoryLimit::kKey].get<double>(), 200.0);
            QCOMPARE(j["constraint_definitions"][TrainingMemoryLimit::kKey]["pattern"].get<std::string>(), std::string(kPattern));
        }
    }

    void theBudgetBinds()
    {
        // Without it, the same search's winner needs more than 200 KB to fine-tune.
        MacsOracle oracle;
        SearchOptions o;
        o.seed = 3;
        const SearchResult free = runSearch(space, oracle, labLimits(), o);
        QVERIFY2(trainingTotal(space, free.best.config) > 200 * 1024, qPrintable(QString::number(trainingTotal(space, free.best.config))));
        Constraints c = labLimits();
        c.set(TrainingMemoryLimit(space, kPattern).quantity(), 200);
        const SearchResult bound = runSearch(space, oracle, c, o);
        QVERIFY(trainingTotal(space, bound.best.config) <= 200 * 1024);
        QVERIFY(bound.best.accuracy < free.best.accuracy);
    }

    void anImpossibleBudgetIsRefusedWithTheSpacesMinimum()
    {
        Constraints c;
        c.set(TrainingMemoryLimit(space, kPattern).quantity(), 100);
        QString msg;
        try {
            requireFeasible(space, c);
        } catch (const InfeasibleError& e) {
            msg = QString::fromUtf8(e.what());
        }
        QCOMPARE(msg, QStringLiteral("training memory (bias-only:12+pw1:3@1/4) ≤ 100 KB is impossible: the smallest subnet in "
                                     "this space needs 101.657 KB (inference working set 72 KB + extra 29.657 KB)"));
        // 101.657 KB is the exact minimum: the analysis reaches it with a real subnet, and no
        // sampled subnet goes below it.
        const FeasibilityReport rep = analyseFeasibility(space, c);
        QCOMPARE(rep.bounds.size(), std::size_t(1));
        const double least = rep.bounds[0].least_alone;
        QCOMPARE(static_cast<double>(trainingTotal(space, rep.bounds[0].least_alone_config)), least * 1024);
        ArchSampler sampler(space);
        PyRandom rng(7);
        for (int i = 0; i < 3000; ++i) {
            const SubnetConfig s = sampler.random(rng);
            QVERIFY(static_cast<double>(trainingTotal(space, s)) >= least * 1024);
        }
        // Together with the inference limits the least total only grows.
        Constraints both = labLimits();
        both.set(TrainingMemoryLimit(space, kPattern).quantity(), least);
        QVERIFY(analyseFeasibility(space, both).feasibleOverall());
        both.set(TrainingMemoryLimit(space, kPattern).quantity(), least - 1.0 / 1024);
        QVERIFY(!analyseFeasibility(space, both).feasibleOverall());
    }

    void aStoredResultRestoresItsLimitsWithThePattern()
    {
        Constraints c = labLimits();
        c.set(TrainingMemoryLimit(space, "last:4").quantity(), 400);
        MacsOracle oracle;
        SearchOptions o;
        o.generations = 2;
        const Json j = toJson(runSearch(space, oracle, c, o), false);
        const Constraints back = TrainingMemoryLimit::restore(space, j["constraints"], j["constraint_definitions"], "history");
        QCOMPARE(back.describe(), c.describe());
        QCOMPARE(back.toJson(), c.toJson());
        QCOMPARE(j["constraints_text"].get<std::string>(), c.describe());
        // Without the pattern, the limit cannot be restored: say which key needs what.
        QCOMPARE(test::errorOf([&] { TrainingMemoryLimit::restore(space, j["constraints"], Json::object(), "runs.json"); }),
                 std::string("runs.json: KBTrainingMemory needs constraint_definitions.KBTrainingMemory.pattern (the scheme pattern)"));
        // Results without a training limit restore as before.
        QCOMPARE(TrainingMemoryLimit::restore(space, labLimits().toJson(), Json(), "x").toJson(), labLimits().toJson());
    }

    void aBadPatternNamesTheTerm()
    {
        const std::string e = test::errorOf([&] { TrainingMemoryLimit(space, "bias-only:12+pw1:3@1/3"); });
        QVERIFY2(e.find("term 2 'pw1:3@1/3'") != std::string::npos, e.c_str());
    }
};

QTEST_MAIN(TestTrainingBudgetSearch)
#include "test_training_budget_search.moc"
