// The scheme search under a memory budget (graph/SchemeKnapsack.h, issue 20): the choice fits the
// budget by the ledger's own count, equals brute force on a small network, is the same on every
// call, and an infeasible budget names the least memory a scheme needs.
#include "TestSupport.h"
#include "TinyNets.h"

#include "Error.h"
#include "graph/MemoryLedger.h"
#include "graph/SchemeEdit.h"
#include "graph/SchemeKnapsack.h"
#include "space/PyRandom.h"
#include "zoo/ZooCatalog.h"

#include <functional>

using namespace tinyscope;

namespace {

const std::vector<double> kRatios{0.125, 0.25, 0.5, 1.0};

// Seeded gains: bias tails rising with noise, weights of the non-depthwise convs some negative.
SchemeContributions randomGains(const Network& net, std::uint64_t seed, const std::vector<int>& tails, int window)
{
    PyRandom rng(seed);
    SchemeContributions c;
    for (int k : tails) c.bias_tail[k] = 0.3 * k + 2.0 * rng.random() - 0.5;
    const int nb = net.numBackboneConvs();
    for (int i = std::max(0, nb - window); i < nb; ++i) {
        if (net.conv(i).depthwise()) continue;
        for (double r : kRatios)
            if (ratioSelectsChannels(net.conv(i), r)) c.weight[{i, r}] = 3.0 * rng.random() - 1.0;
    }
    return c;
}

}  // namespace

class TestSchemeKnapsack : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theChoiceEqualsBruteForceOnASmallNetwork()
    {
        const Network net = test::tinyResidualNet();
        const int nb = net.numBackboneConvs();
        std::vector<int> tails;
        for (int k = 1; k <= nb; ++k) tails.push_back(k);
        const TrainingMemoryModel mm(net);
        for (std::uint64_t seed : {1u, 2u, 3u}) {
            const SchemeContributions c = randomGains(net, seed, tails, nb);
            for (std::int64_t budget : {2000LL, 4000LL, 8000LL, 20000LL}) {
                // Brute force: every tail, every choice of at most one ratio per conv inside it.
                double bestGain = 0;   // the classifier only
                std::function<void(int, int, double, ResolvedScheme)> walk = [&](int k, int conv, double gain, ResolvedScheme s) {
                    if (conv == nb) {
                        if (mm.extraMemory(s).total() <= budget) bestGain = std::max(bestGain, gain);
                        return;
                    }
                    walk(k, conv + 1, gain, s);
                    if (conv < nb - k) return;
                    for (double r : kRatios) {
                        auto it = c.weight.find({conv, r});
                        if (it == c.weight.end()) continue;
                        ResolvedScheme t = s;
                        setConvUpdate(t, net, conv, true, r);
                        walk(k, conv + 1, gain + it->second, t);
                    }
                };
                for (int k : tails) walk(k, 0, c.bias_tail.at(k), SparseScheme::biasOnly(k).resolve(net));
                const KnapsackChoice got = bestSchemeUnderBudget(net, c, budget);
                QVERIFY2(got.extra_bytes <= budget, qPrintable(QStringLiteral("%1 > %2").arg(got.extra_bytes).arg(budget)));
                QCOMPARE(mm.extraMemory(got.resolved).total(), got.extra_bytes);
                QVERIFY2(std::fabs(got.gain - bestGain) < 1e-9,
                         qPrintable(QStringLiteral("seed %1 budget %2: knapsack %3, brute force %4").arg(seed).arg(budget).arg(got.gain).arg(bestGain)));
            }
        }
    }

    void mcunetChoicesFitTheBudgetAndRepeat()
    {
        const Network net = zooModel("mcunet-5fps");
        const TrainingMemoryModel mm(net);
        const std::vector<int> tails{4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 41};
        const SchemeContributions c = randomGains(net, 7, tails, 20);
        for (double kb : {20.0, 49.0, 74.0, 148.0}) {
            const std::int64_t budget = static_cast<std::int64_t>(kb * 1024);
            const KnapsackChoice a = bestSchemeUnderBudget(net, c, budget);
            const KnapsackChoice b = bestSchemeUnderBudget(net, c, budget);
            QVERIFY(a.scheme == b.scheme);
            QCOMPARE(a.gain, b.gain);
            QVERIFY(a.extra_bytes <= budget);
            QCOMPARE(mm.ledger(a.resolved).extra.total(), a.extra_bytes);   // the ledger's own count
            QVERIFY(schemeExpressibilityProblem(a.resolved, net).empty());   // a tiny-training config
        }
        // More budget never buys less.
        QVERIFY(bestSchemeUnderBudget(net, c, 148 * 1024).gain >= bestSchemeUnderBudget(net, c, 49 * 1024).gain);
    }

    void anInfeasibleBudgetNamesTheLeastAnySchemeNeeds()
    {
        const Network net = zooModel("mcunet-5fps");
        const std::int64_t least = TrainingMemoryModel(net).extraMemory(classifierOnlyScheme(net)).total();
        try {
            bestSchemeUnderBudget(net, {}, least - 1);
            QFAIL("expected an InfeasibleError");
        } catch (const InfeasibleError& e) {
            QVERIFY2(QString(e.what()).contains(QStringLiteral("(%1 B)").arg(least)), e.what());
            QVERIFY2(QString(e.what()).contains(QStringLiteral("least any scheme needs")), e.what());
        }
        QCOMPARE(bestSchemeUnderBudget(net, {}, least).extra_bytes, least);
    }
};

QTEST_GUILESS_MAIN(TestSchemeKnapsack)
#include "test_scheme_knapsack.moc"
