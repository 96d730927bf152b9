// Search: limits (unknown keys, infeasible requests proven at once with the least reachable value),
// the lab's evolution and random search draw for draw against a Python rendering of their
// semantics, reproducibility, limits met by every subnet, batches, cancellation, the redraw
// bound, the Pareto front, the populations and origins kept for playback (also through the stored
// history), and the shipped predictor reaching the lab's accuracy.
#include "TestSupport.h"
#include "LabLimits.h"

#include "Error.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "search/ArchitectureSearch.h"
#include "search/Feasibility.h"
#include "search/StoredSearch.h"
#include "space/ArchEncoder.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QProcess>

#include <algorithm>
#include <cmath>
#include <future>
#include <map>

using namespace tinyscope;

namespace {

// A deterministic stand-in for accuracy; bench/lab_search_reference.py sums the same terms in the
// same order, so both sides get bit-identical doubles.
class ToyOracle : public AccuracyOracle {
public:
    explicit ToyOracle(const DesignSpace& s) : enc_(s) {}
    std::vector<double> predict(const std::vector<SubnetConfig>& configs) override
    {
        ++calls;
        batchSizes.push_back(configs.size());
        std::vector<double> out;
        for (const SubnetConfig& c : configs) {
            double acc = 80.0;
            for (int i : enc_.oneHotIndices(c)) acc += ((i * 7919) % 101) / 50.0;
            out.push_back(acc);
        }
        return out;
    }
    std::string describe() const override { return "toy oracle"; }
    int calls = 0;
    std::vector<std::size_t> batchSizes;

private:
    ArchEncoder enc_;
};

std::string infeasibleMessage(const DesignSpace& space, const Constraints& c)
{
    try {
        requireFeasible(space, c);
    } catch (const InfeasibleError& e) {
        return e.what();
    }
    return "feasible";
}

using test::labLimits;

QString python()
{
    // The Python reference needs numpy (Debian's python3-numpy).
    for (const QString& p : {QStringLiteral("/usr/bin/python3"), QStringLiteral("python3")}) {
        QProcess q;
        q.start(p, {QStringLiteral("-c"), QStringLiteral("import numpy")});
        if (q.waitForFinished(30000) && q.exitStatus() == QProcess::NormalExit && q.exitCode() == 0) return p;
    }
    return QString();
}

Json runReference(const Json& request)
{
    QProcess q;
    q.start(python(), {test::sourceDir() + QStringLiteral("/bench/lab_search_reference.py"), QString::fromStdString(request.dump())});
    if (!q.waitForFinished(120000)) return Json();
    return Json::parse(q.readAllStandardOutput().toStdString());
}

}  // namespace

class TestSearch : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");

private Q_SLOTS:
    void impossibleSramIsProvenWithTheSpacesMinimum()
    {
        Constraints c;
        c.set("KBPeakMemory", 64);
        QCOMPARE(infeasibleMessage(space, c),
                 std::string("peak SRAM ≤ 64 KB is impossible: the smallest subnet in this space needs 72 KB"));
        c = Constraints();
        c.set("millionMACs", 8);
        c.set("KBPeakMemory", 300);
        QCOMPARE(infeasibleMessage(space, c), std::string("MACs ≤ 8 M is impossible: the smallest subnet in this space needs 8.302 M"));
        c.set("params", 300000);
        QCOMPARE(infeasibleMessage(space, c),
                 std::string("MACs ≤ 8 M is impossible: the smallest subnet in this space needs 8.302 M; "
                             "params ≤ 300000 is impossible: the smallest subnet in this space needs 304538"));
        c = Constraints();
        c.set("millionMACs", 9);
        c.set("KBFlash", 1);
        QVERIFY(infeasibleMessage(space, c).find("flash ≤ 1 KB is impossible: the smallest subnet in this space needs ") == 0);
        // Exactly the minimum is feasible (limits are inclusive, as the lab's check).
        c = Constraints();
        c.set("KBPeakMemory", 72);
        QCOMPARE(infeasibleMessage(space, c), std::string("feasible"));
    }

    void leastReachableValuesAreTheSpacesExactMinimum()
    {
        Constraints c = labLimits();
        c.set("params", 5e6);
        c.set("KBFlash", 5000);
        FeasibilityReport r = analyseFeasibility(space, c);
        QVERIFY(r.proven);
        QCOMPARE(r.candidates, std::size_t(3 * 5 * 243));
        QCOMPARE(r.bounds[0].least, 8.302128);              // min subnet at 96: 8,302,128 MACs
        QCOMPARE(r.bounds[1].least, 72.0);                  // 73,728 bytes
        QCOMPARE(r.bounds[2].least, 304538.0);
        QVERIFY(r.feasibleOverall());
        QVERIFY(!r.feasible.empty());
        QuantityRange sram = quantityRange(space, *Constraints::builtinQuantity("KBPeakMemory"));
        QCOMPARE(sram.least, 72.0);
        QVERIFY(sram.greatest > 270.0);   // the full-width max at 160 needs far more than the lab's max at 96
    }

    void otherLimitsRaiseTheLeastReachableValue()
    {
        // A caller-defined quantity (how issue 7 adds training memory): "narrowness" = last width
        // index - wid, limited to 0, forces the widest width; then 72 KB is out of reach.
        auto narrow = std::make_shared<ConstraintQuantity>();
        narrow->key = "narrowness";
        narrow->label = "narrowness";
        narrow->measure = [](const SubnetConfig& c, const CostSummary&) { return 2.0 - c.wid; };
        Constraints c;
        c.set(narrow, 0.5);
        c.set("KBPeakMemory", 80);
        const std::string msg = infeasibleMessage(space, c);
        QVERIFY2(msg.find("peak SRAM ≤ 80 KB is impossible: with narrowness ≤ 0.5 the smallest subnet needs 144 KB "
                          "(without them 72 KB)") != std::string::npos,
                 msg.c_str());
        FeasibilityReport r = analyseFeasibility(space, c);
        QVERIFY(r.bounds[1].least > 80);
        for (const SubnetConfig& f : r.feasible) QCOMPARE(f.wid, 2);
        // A quantity that is not monotone cannot be proven: the search samples with a bounded budget.
        auto odd = std::make_shared<ConstraintQuantity>(*narrow);
        odd->key = "odd";
        odd->monotone_in_blocks = false;
        Constraints u;
        u.set(odd, 1);
        QVERIFY(!analyseFeasibility(space, u).proven);
    }

    void unknownAndBadLimitsAreErrors()
    {
        auto err = test::errorOf;
        std::string m = err([] { Constraints::fromJson(Json::parse(R"({"millionMACs": 60, "latency_ms": 5})"), "limits.json"); });
        QCOMPARE(m, std::string("limits.json: unknown constraint 'latency_ms' (known: millionMACs, KBPeakMemory, params, KBFlash)"));
        m = err([] { Constraints().set("peakKB", 1); });
        QVERIFY2(m.find("unknown constraint 'peakKB'") == 0, m.c_str());
        m = err([] { Constraints::fromJson(Json::parse(R"({"KBPeakMemory": -3})"), "l.json"); });
        QVERIFY2(m.find("l.json: KBPeakMemory: a limit must be a positive number, got -3") == 0, m.c_str());
        m = err([] { Constraints::fromJson(Json::parse(R"({"KBPeakMemory": "250"})"), "l.json"); });
        QVERIFY2(m.find("expected a number") != std::string::npos, m.c_str());
        Constraints c = Constraints::fromJson(Json::parse(R"({"millionMACs": 60, "KBPeakMemory": 250})"), "ok");
        QCOMPARE(c.describe(), std::string("MACs ≤ 60 M, peak SRAM ≤ 250 KB"));
        QCOMPARE(c.toJson(), Json::parse(R"({"millionMACs": 60, "KBPeakMemory": 250})"));
        SearchOptions o;
        o.population = 0;
        QVERIFY(err([&] { o.validate(); }).find("population must be in 1..100000, got 0") != std::string::npos);
        o = SearchOptions();
        o.algorithm = "annealing";
        QVERIFY(err([&] { o.validate(); }).find("evolution or random") != std::string::npos);
    }

    void evolutionFollowsTheLabsSemanticsDrawForDraw()
    {
        if (python().isEmpty()) QSKIP("python3 with numpy not found: the Python reference cannot run");
        ToyOracle oracle(space);
        SearchOptions o;
        o.population = 20;
        o.generations = 15;
        o.mutation_ratio = 0.3;
        o.seed = 4;
        SearchResult r = runSearch(space, oracle, labLimits(), o);
        Json ref = runReference({{"algorithm", "evolution"}, {"population_size", 20}, {"max_time_budget", 15},
                                 {"parent_ratio", 0.25}, {"mutation_ratio", 0.3}, {"arch_mutate_prob", 0.1},
                                 {"resolution_mutate_prob", 0.5}, {"seed", 4}, {"constraints", labLimits().toJson()},
                                 {"oracle", "toy"}});
        QVERIFY2(ref.is_object(), "the Python reference produced no result");
        // Per-generation best, the final generation's children and the winner are identical.
        QCOMPARE(r.history.size(), ref["history"].size());
        for (std::size_t g = 0; g < r.history.size(); ++g) QCOMPARE(r.history[g].best, ref["history"][g].get<double>());
        const Json& pop = ref["population"];
        const std::size_t P = 20;
        for (std::size_t i = 0; i < P; ++i) {
            const SubnetConfig expected = SubnetConfig::fromJson(pop[pop.size() - P + i], space, "python");
            QVERIFY2(r.evaluated[r.evaluated.size() - P + i].config == expected, qPrintable(QString::number(i)));
        }
        QCOMPARE(r.best.accuracy, ref["best_accuracy"].get<double>());
        QCOMPARE(r.best.cost.macs, ref["macs"].get<std::int64_t>());
        QCOMPARE(r.best.cost.peak_activation_bytes, ref["peak_activation_bytes"].get<std::int64_t>());
    }

    void randomSearchFollowsTheLabsSemanticsDrawForDraw()
    {
        if (python().isEmpty()) QSKIP("python3 with numpy not found: the Python reference cannot run");
        ToyOracle oracle(space);
        SearchOptions o;
        o.algorithm = "random";
        o.population = 30;
        o.generations = 3;
        o.seed = 9;
        SearchResult r = runSearch(space, oracle, labLimits(), o);
        Json ref = runReference({{"algorithm", "random"}, {"population_size", 30}, {"max_time_budget", 3},
                                 {"parent_ratio", 0.25}, {"mutation_ratio", 0.5}, {"arch_mutate_prob", 0.1},
                                 {"resolution_mutate_prob", 0.5}, {"seed", 9}, {"constraints", labLimits().toJson()},
                                 {"oracle", "toy"}});
        QCOMPARE(r.evaluated.size(), std::size_t(120));
        QCOMPARE(ref["population"].size(), std::size_t(120));
        for (std::size_t i = 0; i < 120; ++i)
            QVERIFY2(r.evaluated[i].config == SubnetConfig::fromJson(ref["population"][i], space, "python"), qPrintable(QString::number(i)));
        QCOMPARE(r.best.accuracy, ref["best_accuracy"].get<double>());
    }

    void sameSeedSameSearchOtherSeedOtherSearch()
    {
        ToyOracle a(space), b(space), c(space);
        SearchOptions o;
        o.seed = 3;
        SearchResult r1 = runSearch(space, a, labLimits(), o), r2 = runSearch(space, b, labLimits(), o);
        QVERIFY(r1.best.config == r2.best.config);
        QCOMPARE(r1.evaluated.size(), r2.evaluated.size());
        for (std::size_t i = 0; i < r1.evaluated.size(); ++i) QVERIFY(r1.evaluated[i].config == r2.evaluated[i].config);
        o.seed = 4;
        SearchResult r3 = runSearch(space, c, labLimits(), o);
        QVERIFY(!(r3.evaluated.front().config == r1.evaluated.front().config));
    }

    void everySubnetMeetsTheLimitsAndTheOracleSeesWholeBatches()
    {
        for (const char* algo : {"evolution", "random"}) {
            ToyOracle oracle(space);
            Constraints c = labLimits();
            c.set("params", 800000);
            SearchOptions o;
            o.algorithm = algo;
            o.seed = 1;
            SearchResult r = runSearch(space, oracle, c, o);
            QCOMPARE(r.evaluated.size(), std::size_t(50 * 21));
            for (const SearchCandidate& s : r.evaluated) {
                QVERIFY(s.cost.macs <= 60000000);
                QVERIFY(s.cost.peak_activation_bytes <= 250 * 1024);
                QVERIFY(s.cost.params <= 800000);
            }
            // One oracle call per generation, each with the whole population.
            QCOMPARE(oracle.calls, 21);
            for (std::size_t n : oracle.batchSizes) QCOMPARE(n, std::size_t(50));
            QCOMPARE(r.oracle_calls, std::size_t(21));
            QCOMPARE(r.history.size(), std::size_t(21));
            double best = 0;
            for (const SearchCandidate& s : r.evaluated) best = std::max(best, s.accuracy);
            QCOMPARE(r.best.accuracy, best);
            for (std::size_t g = 1; g < r.history.size(); ++g) QVERIFY(r.history[g].best >= r.history[g - 1].best);
            QVERIFY(r.rejected > 0 && r.cost_evaluations == r.rejected + 50 * 21);
            QCOMPARE(r.fallbacks, std::size_t(0));
        }
    }

    void cancellingStopsBetweenGenerations()
    {
        ToyOracle oracle(space);
        std::atomic<bool> cancel{false};
        SearchCallbacks cb;
        cb.cancel = &cancel;
        int seen = 0;
        cb.onGeneration = [&](const GenerationStats& g, const SearchCandidate& best) {
            ++seen;
            QVERIFY(best.accuracy >= g.mean);
            if (g.generation == 3) cancel = true;
        };
        SearchResult r = runSearch(space, oracle, labLimits(), SearchOptions(), cb);
        QVERIFY(r.cancelled);
        QCOMPARE(seen, 4);
        QCOMPARE(r.history.size(), std::size_t(4));
        QVERIFY(r.found);
    }

    void theTightestFeasibleLimitStillEnds()
    {
        // Only subnets next to the smallest one meet both: random draws practically never do, and
        // the lab loops forever; the redraw bound falls back to proven subnets.
        ToyOracle oracle(space);
        Constraints c;
        c.set("KBPeakMemory", 72);
        c.set("millionMACs", 8.4);
        SearchOptions o;
        o.population = 10;
        o.generations = 3;
        o.max_redraws = 2000;
        SearchResult r = runSearch(space, oracle, c, o);
        QVERIFY(r.fallbacks > 0);
        for (const SearchCandidate& s : r.evaluated) QVERIFY(s.cost.peak_activation_bytes <= 72 * 1024 && s.cost.macs <= 8400000);
    }

    void paretoFrontHoldsOnlyUndominatedPoints()
    {
        ToyOracle oracle(space);
        SearchResult r = runSearch(space, oracle, labLimits(), SearchOptions());
        std::vector<std::size_t> front = r.paretoFront();
        QVERIFY(front.size() >= 2);
        for (std::size_t k = 1; k < front.size(); ++k) {
            QVERIFY(r.evaluated[front[k]].cost.macs >= r.evaluated[front[k - 1]].cost.macs);
            QVERIFY(r.evaluated[front[k]].accuracy > r.evaluated[front[k - 1]].accuracy);
        }
        for (const SearchCandidate& s : r.evaluated)
            for (std::size_t i : front)
                QVERIFY(!(s.cost.macs < r.evaluated[i].cost.macs && s.accuracy > r.evaluated[i].accuracy));
        QCOMPARE(r.evaluated[front.back()].accuracy, r.best.accuracy);
        Json j = toJson(r);
        QCOMPARE(j["evaluated"]["count"].get<std::size_t>(), r.evaluated.size());
        QCOMPARE(j["pareto"].size(), front.size());
    }

    void populationsAndOriginsAreRecordedPerGeneration()
    {
        // Search playback (issue 22): what the options imply, not what the run produced.
        ToyOracle oracle(space);
        SearchOptions o;
        o.population = 24;
        o.generations = 7;
        o.mutation_ratio = 0.375;   // 9 of 24 children mutated, 15 crossed over
        o.parent_ratio = 0.25;      // 6 parents kept
        o.seed = 3;
        const int parents = static_cast<int>(std::lround(o.parent_ratio * o.population));
        const int mutations = static_cast<int>(std::lround(o.mutation_ratio * o.population));
        QCOMPARE(parents, 6);
        QCOMPARE(mutations, 9);
        SearchResult r = runSearch(space, oracle, labLimits(), o);
        QCOMPARE(r.populations.size(), static_cast<std::size_t>(o.generations + 1));
        QCOMPARE(r.populations.size(), r.history.size());
        for (std::size_t g = 0; g < r.populations.size(); ++g) {
            const std::vector<std::size_t>& pop = r.populations[g];
            // Generation 0: the random population; then the parents kept plus the generation's children.
            QCOMPARE(pop.size(), static_cast<std::size_t>(g == 0 ? o.population : parents + o.population));
            std::map<CandidateOrigin, int> children;
            double mean = 0;
            for (std::size_t i : pop) {
                QVERIFY(i < r.evaluated.size());
                const SearchCandidate& c = r.evaluated[i];
                QVERIFY(c.generation <= static_cast<int>(g));
                QCOMPARE(c.index, i);
                mean += c.accuracy;
                if (c.generation == static_cast<int>(g)) ++children[c.origin];
            }
            QCOMPARE(mean / static_cast<double>(pop.size()), r.history[g].mean);   // the population the statistics saw
            if (g == 0) {
                QCOMPARE(children[CandidateOrigin::initial], o.population);
                continue;
            }
            QCOMPARE(children[CandidateOrigin::mutation], mutations);
            QCOMPARE(children[CandidateOrigin::crossover], o.population - mutations);
            QCOMPARE(children[CandidateOrigin::initial] + children[CandidateOrigin::random] + children[CandidateOrigin::unknown], 0);
            // The survivors are the `parents` most accurate of the previous population.
            std::vector<double> prev;
            for (std::size_t i : r.populations[g - 1]) prev.push_back(r.evaluated[i].accuracy);
            std::sort(prev.rbegin(), prev.rend());
            std::vector<double> kept;
            for (std::size_t i : pop)
                if (r.evaluated[i].generation < static_cast<int>(g)) kept.push_back(r.evaluated[i].accuracy);
            std::sort(kept.rbegin(), kept.rend());
            QCOMPARE(kept, std::vector<double>(prev.begin(), prev.begin() + parents));
        }
        // Random search: each generation's population is its batch of random draws.
        o.algorithm = "random";
        SearchResult rr = runSearch(space, oracle, labLimits(), o);
        QCOMPARE(rr.populations.size(), static_cast<std::size_t>(o.generations + 1));
        for (std::size_t g = 0; g < rr.populations.size(); ++g) {
            QCOMPARE(rr.populations[g].size(), static_cast<std::size_t>(o.population));
            for (std::size_t k = 0; k < rr.populations[g].size(); ++k) {
                const SearchCandidate& c = rr.evaluated[rr.populations[g][k]];
                QCOMPARE(c.generation, static_cast<int>(g));
                QCOMPARE(c.origin, CandidateOrigin::random);
                QCOMPARE(rr.populations[g][k], g * static_cast<std::size_t>(o.population) + k);
            }
        }
        // Without keep_evaluated there is nothing to index.
        o.keep_evaluated = false;
        QVERIFY(runSearch(space, oracle, labLimits(), o).populations.empty());

        // The JSON and the stored run carry them; a re-opened run plays back the same populations.
        const Json j = toJson(r);
        QCOMPARE(j["populations"].size(), r.populations.size());
        QCOMPARE(j["evaluated"]["origin"][r.populations[1].back()].get<std::string>(), std::string("crossover"));
        const SearchRunRecord rec = SearchRunRecord::fromJson(SearchRunRecord::fromResult(r, space.name, "now").toJson(), "rec");
        const StoredSearch stored = storedSearch(rec, space);
        const std::size_t front = r.paretoFront().size();
        QCOMPARE(stored.sampled, r.evaluated.size());
        QCOMPARE(stored.result.populations.size(), r.populations.size());
        for (std::size_t g = 0; g < r.populations.size(); ++g)
            for (std::size_t k = 0; k < r.populations[g].size(); ++k) {
                const SearchCandidate& a = r.evaluated[r.populations[g][k]];
                const SearchCandidate& b = stored.result.evaluated[stored.result.populations[g][k]];
                QCOMPARE(stored.result.populations[g][k], front + r.populations[g][k]);
                QCOMPARE(b.accuracy, a.accuracy);
                QCOMPARE(b.cost.macs, a.cost.macs);
                QCOMPARE(b.origin, a.origin);
                QCOMPARE(b.generation, a.generation);
            }
        // The winner's sampled copy has the front's config: clicking it on a re-opened run loads it.
        bool winnerHasConfig = false;
        for (std::size_t i = front; i < stored.result.evaluated.size(); ++i)
            if (stored.result.evaluated[i].accuracy == r.best.accuracy && stored.result.evaluated[i].hasConfig())
                winnerHasConfig = stored.result.evaluated[i].config == r.best.config;
        QVERIFY(winnerHasConfig);
        // A record written before playback (no origin column, no populations) still opens, without them.
        SearchRunRecord old = rec;
        old.result["sample"].erase("populations");
        for (Json& row : old.result["sample"]["rows"]) row.erase(row.size() - 1);
        const StoredSearch before = storedSearch(old, space);
        QVERIFY(before.result.populations.empty());
        QCOMPARE(before.result.evaluated.back().origin, CandidateOrigin::unknown);
        QCOMPARE(before.sampled, r.evaluated.size());
    }

    void shippedPredictorFindsTheLabsAccuracyUnderItsLimits()
    {
        const std::string path = shippedPredictorPath("mcunet-vww");
        QVERIFY2(!path.empty(), "models/predictors/mcunet-vww.bin is missing");
        AccuracyPredictor pred = AccuracyPredictor::load(path, space);
        SearchOptions o;   // defaults: the lab's population 50, 20 generations
        o.seed = 1;
        SearchResult r = runSearch(space, pred, labLimits(), o);
        qInfo("best %.3f %% at %.3f M MACs, %.1f KB, %.1f ms", r.best.accuracy, r.best.cost.millionMacs(), r.best.cost.peakKB(),
              r.seconds * 1e3);
        QVERIFY(r.best.cost.macs <= 60000000);
        QVERIFY(r.best.cost.peak_activation_bytes <= 250 * 1024);
        QVERIFY2(r.best.accuracy >= 92.5, qPrintable(QString::number(r.best.accuracy)));
        QVERIFY(r.best.accuracy < 96);
        QVERIFY(r.warnings.empty());
        QVERIFY(r.oracle.find("MLP predictor") == 0);
    }

    void concurrentSearchesAreDeterministic()
    {
        // Four searches at once (each with its own predictor, as the GUI's workers have) give what
        // each gives alone: no shared state between runs.
        const std::string path = shippedPredictorPath("mcunet-vww");
        QVERIFY2(!path.empty(), "models/predictors/mcunet-vww.bin is missing");
        auto search = [&](std::uint64_t seed) {
            AccuracyPredictor pred = AccuracyPredictor::load(path, space);
            SearchOptions o;
            o.seed = seed;
            o.generations = 8;
            return runSearch(space, pred, labLimits(), o);
        };
        std::vector<SearchResult> alone;
        for (std::uint64_t seed = 1; seed <= 4; ++seed) alone.push_back(search(seed));
        std::vector<std::future<SearchResult>> together;
        for (std::uint64_t seed = 1; seed <= 4; ++seed) together.push_back(std::async(std::launch::async, search, seed));
        for (std::size_t i = 0; i < together.size(); ++i) {
            const SearchResult r = together[i].get();
            QVERIFY(r.best.config == alone[i].best.config);
            QCOMPARE(r.best.accuracy, alone[i].best.accuracy);
            QCOMPARE(r.evaluated.size(), alone[i].evaluated.size());
            for (std::size_t k = 0; k < r.evaluated.size(); ++k) QCOMPARE(r.evaluated[k].accuracy, alone[i].evaluated[k].accuracy);
        }
    }
};

QTEST_MAIN(TestSearch)
#include "test_search.moc"
