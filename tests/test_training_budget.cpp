// The training-memory budget the search will use: scheme patterns that apply to a subnet of any
// depth (syntax, errors, exactly the scheme they promise), their cost (inference peak + analytic
// extra memory from the memory ledger, equal to tiny-training's published figure when the
// pattern spells a published scheme), on zoo models and design-space subnets.
#include "TestSupport.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "graph/TrainingBudget.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

using namespace tinyscope;
using test::inputErrorOf;

namespace {

bool sameScheme(const Network& net, const std::string& pattern, const SparseScheme& expected)
{
    return sameUpdates(TrainingSchemePattern::parse(pattern).resolve(net), expected.resolve(net));
}

}  // namespace

class TestTrainingBudget : public QObject {
    Q_OBJECT
    Network mcunet = zooModel("mcunet-5fps");

private Q_SLOTS:
    void patternsMeanTheNamedSchemes()
    {
        const Network& n = mcunet;   // 42 backbone convs
        QVERIFY(sameScheme(n, "bias-only:20", SparseScheme::biasOnly(20)));
        QVERIFY(sameScheme(n, "bias-only", SparseScheme::biasOnly(42)));
        QVERIFY(sameScheme(n, "bias-only:all", SparseScheme::biasOnly(42)));
        QVERIFY(sameScheme(n, "classifier", SparseScheme::biasOnly(0)));
        QVERIFY(sameScheme(n, "last:6", SparseScheme::lastLayers(n, 6)));
        QVERIFY(sameScheme(n, "full", SparseScheme::full(n)));
        QVERIFY(sameScheme(n, "last:all", SparseScheme::full(n)));
        // Counts beyond what the model has are clamped (one pattern serves deep and shallow subnets).
        QVERIFY(sameScheme(n, "bias-only:1000", SparseScheme::biasOnly(42)));
        QVERIFY(sameScheme(n, " bias-only : 20 ", SparseScheme::biasOnly(20)));
    }

    void pw1TermsPickTheLastPw1ConvsAndPullTheBiasTail()
    {
        std::vector<int> pw1;
        for (int i = 0; i < mcunet.numBackboneConvs(); ++i)
            if (mcunet.conv(i).role == "pw1") pw1.push_back(i);
        QCOMPARE(std::vector<int>(pw1.end() - 3, pw1.end()), (std::vector<int>{33, 36, 39}));

        SparseScheme s;
        s.n_bias_update = 20;
        s.manual_weight_idx = {33, 36, 39};
        s.weight_update_ratio = {0.25, 0.5, 0.5};
        QVERIFY(sameScheme(mcunet, "bias-only:20+pw1:3@1/4,1/2,1/2", s));
        s.weight_update_ratio = {0.125, 0.125, 0.125};
        QVERIFY(sameScheme(mcunet, "bias-only:20+pw1:3@1/8", s));
        QVERIFY(sameScheme(mcunet, "bias-only:20+pw1:3@0.125", s));

        // A weight outside the bias tail pulls the tail down to it (tiny-training needs it inside).
        const ResolvedScheme r = TrainingSchemePattern::parse("pw1:1@1").resolve(mcunet);
        QCOMPARE(r.n_bias_update, 42 - 39);
        QCOMPARE(r.first_updated, 39);
        QCOMPARE(r.conv(39).k, mcunet.conv(39).cin);
        QVERIFY(schemeExpressibilityProblem(r, mcunet).empty());

        // The later term wins: last 3 convs full, then conv 39 (pw1) at 1/8.
        const ResolvedScheme w = TrainingSchemePattern::parse("last:3+pw1:1@1/8").resolve(mcunet);
        QCOMPARE(w.conv(39).ratio, 0.125);
        QCOMPARE(w.conv(40).ratio, 1.0);
        QCOMPARE(w.n_bias_update, 3);
        // A pattern always spells a tiny-training config.
        QCOMPARE(TrainingSchemePattern::parse("last:3+pw1:1@1/8").schemeFor(mcunet).n_bias_update, 3);
    }

    void badPatternsNameTheTermAndTheProblem()
    {
        struct Case {
            const char* text;
            const char* needle;
        } cases[] = {
            {"", "empty term"},
            {"bias-only:20++last:2", "term 2 ''"},
            {"bias-only:x", "'x' is not a layer count"},
            {"last:-1", "'-1' is not a layer count"},
            {"pw1:3", "give the ratios after '@'"},
            {"pw1:3@1/3", "'1/3' is not one of 0, 1/8, 1/4, 1/2, 1"},
            {"pw1:3@1/4,1/2", "2 ratios for 3 pw1 convs"},
            {"pw1:all@1/4,1/2", "2 ratios for 'all' pw1 convs"},
            {"pw1:2@a,1", "'a' is not a ratio"},
            {"mcunet-5fps/49kb", "unknown term"},
        };
        for (const Case& c : cases) {
            const QString m = inputErrorOf([&] { TrainingSchemePattern::parse(c.text); });
            QVERIFY2(m.contains(QString::fromUtf8(c.needle)), qPrintable(QStringLiteral("%1 -> %2").arg(QLatin1String(c.text), m)));
            QVERIFY2(m.contains(QStringLiteral("training scheme pattern '%1'").arg(QLatin1String(c.text))), qPrintable(m));
        }
        // A ratio that selects no channel of some conv is reported with the conv when applied.
        NetworkBuilder b("narrow", {4, 4, 4});
        int x = b.conv(-1, ConvSpec::of("pw1", "pw1", "v0", 0, 8, 1, 1, 1, Activation::ReLU).withBias());
        x = b.globalAvgPool(x, "pool");
        b.conv(x, ConvSpec::of("fc", "classifier", "v1", -1, 10).asLinear());
        const Network narrow = b.finish(10, LossKind::CrossEntropy, "narrow", "tests");
        const QString m = inputErrorOf([&] { TrainingSchemePattern::parse("pw1:all@1/8").resolve(narrow); });
        QVERIFY2(m.contains(QStringLiteral("1/8 selects no input channel of conv 0 (4 channels)")), qPrintable(m));
        QCOMPARE(TrainingSchemePattern::parse("pw1:all@1/4").resolve(narrow).conv(0).k, 1);
    }

    void costOfThePublished49kbPatternIsThePublishedFigure()
    {
        REQUIRE_SHARED();
        // The last six pw1 convs of mcunet-5fps are 24, 27, 30, 33, 36, 39: this pattern is the
        // published "49kb" scheme (weights of 24, 27, 30 at 1/4, 1/2, 1/2; biases of the last 20).
        const TrainingSchemePattern p = TrainingSchemePattern::parse("bias-only:20+pw1:6@1/4,1/2,1/2,0,0,0");
        QVERIFY(sameUpdates(p.resolve(mcunet), schemeByName("mcunet-5fps/49kb", &mcunet).resolve(mcunet)));
        const TrainingBudgetCost c = trainingBudgetCost(mcunet, p);
        const Json ref = readJsonFile(test::sharedPath("reference/tiny-training/schemes.json"));
        std::int64_t published = -1;
        for (const Json& e : ref["schemes"])
            if (e["model"] == "mcunet-5fps" && e["name"] == "49kb") published = e["breakdown"]["total_bytes"].get<std::int64_t>();
        QCOMPARE(c.extra_bytes, published);
        QCOMPARE(c.extra_bytes, std::int64_t(50944));
        QCOMPARE(c.inference_peak_bytes, std::int64_t(163840));   // tiny-training's table: 160 kB
        QCOMPARE(c.totalBytes(), std::int64_t(163840 + 50944));
        QCOMPARE(c.training_peak_bytes, TrainingMemoryModel(mcunet).ledger(p.resolve(mcunet)).peak_bytes);
        QVERIFY(c.fits(256 * 1024));
        QVERIFY(!c.fits(200 * 1024));
        QVERIFY(c.fits(c.totalBytes()));
        QVERIFY(!c.fits(c.totalBytes() - 1));
    }

    void subnetCostsComeFromTheSubnetsLedger()
    {
        const DesignSpace space = presetSpace("mcunet-vww");
        ArchSampler sampler(space);
        PyRandom rng(3);
        const TrainingSchemePattern p = TrainingSchemePattern::parse("bias-only:12+pw1:2@1/4");
        std::int64_t previous = -1;
        for (int i = 0; i < 20; ++i) {
            const SubnetConfig cfg = sampler.random(rng);
            const Network net = networkFromSubnet(space, cfg);
            const TrainingBudgetCost c = trainingBudgetCost(space, cfg, p);
            const MemoryLedger m = TrainingMemoryModel(net).ledger(p.resolve(net));
            QCOMPARE(c.extra_bytes, m.extra.total());
            QCOMPARE(c.inference_peak_bytes, m.inference_peak_bytes);
            QCOMPARE(c.training_peak_bytes, m.peak_bytes);
            // The extra memory is the pattern's: the classifier input, masks + int32 biases of the
            // bias tail (the last 12 convs, longer if a chosen pw1 conv lies before them), and the
            // saved inputs + weights of the last two pw1 convs at 1/4 of their input channels.
            const int nb = net.numBackboneConvs();
            std::vector<int> pw1;
            for (int ci = nb - 1; ci >= 0 && pw1.size() < 2; --ci)
                if (net.conv(ci).role == "pw1") pw1.push_back(ci);
            QCOMPARE(int(pw1.size()), 2);
            const int tail = std::min(nb - 12, pw1.back());
            std::int64_t expected = net.head().cin, maskBits = 0;
            for (int ci = tail; ci < nb; ++ci) {
                maskBits += net.conv(ci).out.elems();
                expected += 4LL * net.conv(ci).cout;
            }
            for (int ci : pw1) {
                const Layer& l = net.conv(ci);
                const int k = l.cin / 4;
                expected += static_cast<std::int64_t>(l.in.h) * l.in.w * k + static_cast<std::int64_t>(l.cout) * k;
            }
            expected += (maskBits + 7) / 8;
            QCOMPARE(c.extra_bytes, expected);
            QVERIFY(c.inference_peak_bytes > 0 && c.training_peak_bytes >= c.inference_peak_bytes);
            previous = c.extra_bytes;
        }
        QVERIFY(previous > 0);
        // A bad config is reported, not priced.
        SubnetConfig bad = sampler.random(rng);
        bad.image_size = 17;
        QVERIFY(!inputErrorOf([&] { trainingBudgetCost(space, bad, p); }).isEmpty());
    }

    void moreUpdatesNeverCostLess()
    {
        std::int64_t last = 0;
        for (const char* p : {"classifier", "bias-only:4", "bias-only:12", "bias-only:12+pw1:2@1/8", "bias-only:12+pw1:2@1/2",
                              "bias-only:12+pw1:2@1", "last:12", "full"}) {
            const TrainingBudgetCost c = trainingBudgetCost(mcunet, TrainingSchemePattern::parse(p));
            QVERIFY2(c.extra_bytes > last, p);
            QCOMPARE(c.inference_peak_bytes, std::int64_t(163840));
            last = c.extra_bytes;
        }
    }
};

QTEST_MAIN(TestTrainingBudget)
#include "test_training_budget.moc"
