// The search under a fine-tuning memory budget (search/TrainingMemoryLimit.h): every subnet it
// returns or evaluates meets both the inference limits and "inference peak + extra memory of the
// pattern <= budget" (checked with the independent full pricing of graph/TrainingBudget.h), the
// budget binds, an impossible budget is refused at once with the space's exact minimum and its
// breakdown, and a stored result restores its limits, pattern included. With --train-on tinyengine
// (search/TinyEngineTrainingLimit.h) every subnet it evaluates also passes the export checker and
// the board for its scheme (checked here through export's own path: the scheme by its pattern,
// the reference-form graph, the checker, the ledger), the chosen scheme is the best of its family
// (brute force), and what no subnet can train is refused naming the least budget or the rule.
#include "TestSupport.h"
#include "LabLimits.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/KernelCoverage.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "graph/TrainingBudget.h"
#include "search/TinyEngineTrainingLimit.h"
#include "tinyengine/BoardFit.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/SubnetNetwork.h"
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

using test::labLimits;

// Export's path, independent of the limit's shortcuts: the scheme by its name (loadScheme), the
// reference-form graph with identity slices, the checker's errors, the ledger against the board.
struct ExportVerdict {
    int errors = 0;
    std::string first;
    std::int64_t ledger = 0, total = 0, updated = 0, flash = 0;
    bool fits(const BoardProfile& b, double budgetKB) const
    {
        return errors == 0 && total <= static_cast<std::int64_t>(budgetKB * 1024) && ledger + kBoardSramMargin <= b.sram_bytes &&
               flash + kBoardFlashMargin <= b.flash_bytes;
    }
};

// `graph` false: the geometric coverage only (a brute force's first pass; its winner is then checked in full).
ExportVerdict exportVerdict(const DesignSpace& s, const SubnetConfig& c, const std::string& scheme, bool graph = true)
{
    const Network net = networkFromSubnet(s, c);
    const ResolvedScheme r = loadScheme(scheme, &net).resolve(net);
    ExportVerdict v;
    if (graph) {
        TrainingGraph g = buildTrainingGraph(net, r, AutodiffMode::Reference);
        insertIdentitySlices(g, net);
        for (const Finding& f : checkForTinyEngine(g, net, nullptr))
            if (f.error()) {
                if (!v.errors) v.first = f.text();
                ++v.errors;
            }
    } else {
        for (const CoverageFinding& f : kernelCoverageFindings(net, r)) {
            if (!v.errors) v.first = f.message;
            ++v.errors;
        }
    }
    const MemoryLedger m = TrainingMemoryModel(net).ledger(r, AutodiffMode::Reference);
    v.ledger = m.peak_bytes;
    v.flash = quantizedParameterBytes(net);
    v.total = m.inference_peak_bytes + m.extra.total();
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const Layer& l = net.conv(ci);
        if (r.conv(ci).bias) v.updated += l.cout;
        if (r.conv(ci).weight()) v.updated += static_cast<std::int64_t>(l.cout) * r.conv(ci).k * l.kh * l.kw;
    }
    return v;
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

    void tinyEngineSearchReturnsOnlySubnetsTheCheckerAndTheBoardAccept()
    {
        const DesignSpace te = presetSpace("mcunet-fmnist-te");
        const BoardProfile board = presetBoard("stm32f746");
        for (const char* pattern : {"", "bias-only:6+pw1:2@1"}) {
            Constraints c;
            c.set("millionMACs", 60);
            TinyEngineTrainingLimit limit(te, board, pattern, 96);
            c.set(limit.quantity(), 96);
            MacsOracle oracle;
            SearchOptions o;
            o.population = 20;
            o.generations = 5;
            o.seed = 5;
            const SearchResult r = runSearch(te, oracle, c, o);
            QVERIFY(r.found);
            int weightSchemes = 0;
            for (const SearchCandidate& s : r.evaluated) {
                const TinyEngineTrainingPlan p = limit.plan(s.config);
                QVERIFY2(p.trainable, p.refusal.c_str());
                const ExportVerdict v = exportVerdict(te, s.config, p.scheme);
                QVERIFY2(v.errors == 0, (p.scheme + ": " + v.first).c_str());
                QCOMPARE(v.total, p.totalBytes());
                QVERIFY(v.total <= 96 * 1024);
                QCOMPARE(v.ledger, p.ledger_peak_bytes);
                QVERIFY(v.fits(board, 96));
                QCOMPARE(v.updated, p.updated_parameters);
                weightSchemes += p.scheme.find("pw1") != std::string::npos;
            }
            // The budget leaves room for weight updates: the search finds schemes with them.
            QVERIFY(weightSchemes > 0);
            const Json& t = r.best_reports[TinyEngineTrainingLimit::kReportKey];
            QCOMPARE(t["scheme"].get<std::string>(), limit.plan(r.best.config).scheme);
            QCOMPARE(t["device_sram_estimate_bytes"].get<std::int64_t>(), limit.plan(r.best.config).ledger_peak_bytes + kBoardSramMargin);
            // A stored result restores the limit, pattern and board included.
            const Json j = toJson(r, false);
            const Constraints back = TrainingMemoryLimit::restore(te, j["constraints"], j["constraint_definitions"], "history");
            QCOMPARE(back.toJson(), c.toJson());
            QCOMPARE(back.describe(), c.describe());
        }
    }

    // The chosen scheme is the best bias-only:T+pw1:W@R by brute force over every (T, W, R): the
    // most parameters among the ones export accepts within the budget, ties to the smaller total
    // (R one of 1/8..1 for all W convs, each slice a multiple of 4 channels unless whole).
    void theChosenSchemeIsTheBestOfItsFamily()
    {
        const DesignSpace te = presetSpace("mcunet-fmnist-te");
        const BoardProfile board = presetBoard("stm32f746");
        ArchSampler sampler(te);
        PyRandom rng(11);
        int withWeights = 0, partial = 0;
        for (int i = 0; i < 2; ++i) {
            SubnetConfig c = sampler.random(rng);
            c.image_size = 32;
            c.wid = i;   // within the F746's flash: width 0 and 1 (2 rarely fits)
            const Network net = networkFromSubnet(te, c);
            std::vector<int> pw1;
            for (int ci = 0; ci < net.numBackboneConvs(); ++ci)
                if (net.conv(ci).role == "pw1") pw1.push_back(ci);
            struct Member {
                std::string scheme;
                ExportVerdict v;
            };
            std::vector<Member> family;   // every (T, W, R), priced and covered once
            for (int t = 0; t < net.numBackboneConvs(); ++t)
                for (int w = 0; w <= static_cast<int>(pw1.size()); ++w)
                    for (const char* r : {"1/8", "1/4", "1/2", "1"}) {
                        if (w == 0 && std::string(r) != "1") continue;
                        bool slices = true;
                        for (int j = 0; j < w; ++j) {
                            const Layer& l = net.conv(pw1[pw1.size() - 1 - static_cast<std::size_t>(j)]);
                            for (bool compiler : {false, true}) {
                                const int k = updatedChannels(l, parseRatio(r, "ratio"), compiler);
                                slices &= k > 0 && (k == l.cin || k % 4 == 0);
                            }
                        }
                        if (!slices) continue;
                        const std::string scheme = w ? "bias-only:" + std::to_string(t) + "+pw1:" + std::to_string(w) + "@" + r
                                                     : "bias-only:" + std::to_string(t);
                        family.push_back({scheme, exportVerdict(te, c, scheme, false)});
                    }
            for (double budget : {24.0, 48.0, 96.0}) {
                const Member* best = nullptr;
                for (const Member& m : family) {
                    const ExportVerdict& v = m.v;
                    if (!v.fits(board, budget)) continue;
                    if (!best || v.updated > best->v.updated || (v.updated == best->v.updated && v.total < best->v.total)) best = &m;
                }
                const TinyEngineTrainingPlan p = TinyEngineTrainingLimit(te, board, "", budget).plan(c);
                if (!best) {
                    QVERIFY2(!p.trainable, p.scheme.c_str());
                    continue;
                }
                QVERIFY2(p.trainable, p.refusal.c_str());
                QCOMPARE(p.updated_parameters, best->v.updated);
                QCOMPARE(p.totalBytes(), best->v.total);
                const ExportVerdict full = exportVerdict(te, c, p.scheme);   // the whole checker on the choice
                QVERIFY2(full.errors == 0, full.first.c_str());
                withWeights += p.scheme.find("pw1") != std::string::npos;
                partial += p.scheme.find("@1/") != std::string::npos;
            }
        }
        // The family's weights and partial slices are reached, not only bias tails.
        QVERIFY(withWeights > 0);
        QVERIFY(partial > 0);
    }

    void whatTinyEngineCannotTrainIsRefusedBeforeSearching()
    {
        const BoardProfile board = presetBoard("stm32f746");
        // Squeeze-excite in every subnet: no budget helps, and the message says why.
        const DesignSpace se = presetSpace("mcunet-fmnist");
        std::string e = test::errorOf([&] { TinyEngineTrainingLimit(se, board, "", 500).requireFeasible(Constraints()); });
        QVERIFY2(e.find("no subnet of mcunet-fmnist can be trained on TinyEngine (stm32f746, scheme chosen per subnet) at any budget: "
                        "squeeze-excite gates") != std::string::npos, e.c_str());
        // A pattern no subnet can compile (depthwise weights): its rule.
        const DesignSpace te = presetSpace("mcunet-fmnist-te");
        e = test::errorOf([&] { TinyEngineTrainingLimit(te, board, "last:3", 500).requireFeasible(Constraints()); });
        QVERIFY2(e.find("at any budget: conv 30 (blocks.10.dw): depthwise weight update") != std::string::npos, e.c_str());
        // A budget below the least: the least, exactly (the smallest subnet with the classifier alone), and the rule.
        const SubnetConfig smallest = ArchSampler(te).minConfig(28);
        const ExportVerdict least = exportVerdict(te, smallest, "classifier");
        QCOMPARE(least.errors, 0);
        const double justBelow = (static_cast<double>(least.total) - 1) / 1024.0;
        e = test::errorOf([&] { TinyEngineTrainingLimit(te, board, "", justBelow).requireFeasible(Constraints()); });
        QVERIFY2(e.find("the least any needs is " + formatQuantity(static_cast<double>(least.total) / 1024.0) + " KB") != std::string::npos, e.c_str());
        QVERIFY2(e.find("the rule that binds: the budget") != std::string::npos, e.c_str());
        TinyEngineTrainingLimit(te, board, "", static_cast<double>(least.total) / 1024.0).requireFeasible(Constraints());
        // A board too small for the generated code's margin: nothing fits, the board's rule says so.
        BoardProfile tiny = board;
        tiny.name = "tiny-board";
        tiny.sram_bytes = 64 * 1024;
        e = test::errorOf([&] { TinyEngineTrainingLimit(te, tiny, "", 500).requireFeasible(Constraints()); });
        QVERIFY2(e.find("at any budget") != std::string::npos && e.find("board-sram") != std::string::npos, e.c_str());
    }

    void aBadPatternNamesTheTerm()
    {
        const std::string e = test::errorOf([&] { TrainingMemoryLimit(space, "bias-only:12+pw1:3@1/3"); });
        QVERIFY2(e.find("term 2 'pw1:3@1/3'") != std::string::npos, e.c_str());
    }
};

QTEST_MAIN(TestTrainingBudgetSearch)
#include "test_training_budget_search.moc"
