// Sampling reproduces Python's random module and the lab's sampler draw for draw.
#include "TestSupport.h"

#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

using namespace tinyscope;

namespace {
SubnetConfig cfg(const char* json, const DesignSpace& s) { return SubnetConfig::fromJson(Json::parse(json), s, "test"); }
}  // namespace

class TestArchSampler : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");

private Q_SLOTS:
    void pyRandomMatchesCPython()
    {
        // python3 -c "import random; random.seed(0); print(repr(random.random()), random.getrandbits(32))"
        PyRandom r(0);
        QCOMPARE(r.random(), 0.8444218515250481);
        QCOMPARE(r.getrandbits(32), 3255389356u);
        // Seeds above 2^32 use two key words, as CPython does.
        PyRandom big((1ULL << 40) + 7);
        QCOMPARE(big.random(), 0.6137037779936511);
    }

    void seedZeroGivesTheLabsTenReferenceDraws()
    {
        REQUIRE_SHARED();
        Json ref = readJsonFile(test::sharedPath("reference/mcunet-vww/cost_reference.json"));
        ArchSampler s(space);
        PyRandom rng(0);
        for (int i = 0; i < 10; ++i) {
            SubnetConfig c = s.random(rng);
            SubnetConfig expected = SubnetConfig::fromJson(ref["entries"][15 + i]["config"], space, "entry");
            QVERIFY2(c == expected, qPrintable(QStringLiteral("draw %1").arg(i)));
        }
    }

    void mutateAndCrossoverFollowTheLabsDrawOrder()
    {
        // Expected values from the lab's MCUNetArchEncoder.mutate_* and EvolutionSearcher.crossover_sample
        // run in Python after random.seed(42); two random_sample_arch() draws, mutate(0.5, 0.5, 0.3), crossover.
        ArchSampler s(space);
        PyRandom rng(42);
        SubnetConfig a = s.random(rng), b = s.random(rng);
        QVERIFY(a == cfg(R"({"ks": [5, 3, 3, 3, 7, 7, 7, 3, 5, 3, 3, 5, 3, 3, 5, 5, 3, 5, 7, 3], "e": [6, 6, 4, 3, 6, 4, 3, 3, 6, 4, 6, 6, 4, 6, 4, 4, 6, 4, 6, 4], "d": [2, 0, 0, 0, 0, 0], "image_size": 96, "wid": 1})", space));
        QVERIFY(b == cfg(R"({"ks": [3, 5, 5, 5, 3, 3, 7, 5, 5, 3, 7, 3, 5, 7, 5, 5, 7, 7, 7, 3], "e": [3, 3, 3, 3, 6, 6, 3, 4, 4, 6, 4, 3, 3, 4, 3, 4, 6, 4, 3, 6], "d": [1, 0, 0, 0, 1, 2], "image_size": 144, "wid": 2})", space));
        SubnetConfig m = s.mutate(a, MutationRates{0.5, 0.5, 0.3}, rng);
        QVERIFY(m == cfg(R"({"ks": [5, 7, 3, 7, 7, 7, 3, 7, 7, 3, 7, 5, 3, 5, 5, 5, 3, 5, 5, 3], "e": [6, 3, 4, 4, 6, 4, 4, 6, 3, 4, 4, 6, 4, 3, 4, 4, 6, 4, 4, 6], "d": [2, 1, 0, 0, 0, 2], "image_size": 144, "wid": 1})", space));
        SubnetConfig x = s.crossover(a, b, rng);
        QVERIFY(x == cfg(R"({"ks": [3, 3, 5, 5, 7, 7, 7, 5, 5, 3, 7, 5, 3, 3, 5, 5, 3, 5, 7, 3], "e": [6, 6, 4, 3, 6, 6, 3, 3, 4, 6, 6, 6, 3, 6, 3, 4, 6, 4, 6, 6], "d": [1, 0, 0, 0, 0, 0], "image_size": 96, "wid": 2})", space));
    }

    void sameSeedSameResults()
    {
        ArchSampler s(space);
        PyRandom r1(123), r2(123), r3(124);
        SubnetConfig a1 = s.random(r1), a2 = s.random(r2), a3 = s.random(r3);
        QVERIFY(a1 == a2);
        QVERIFY(a1 != a3);
        QVERIFY(s.mutate(a1, {}, r1) == s.mutate(a2, {}, r2));
    }

    void minAndMaxAreTheLabsConfigs()
    {
        ArchSampler s(space);
        SubnetConfig mn = s.minConfig(96);
        QCOMPARE(mn.wid, 0);
        QVERIFY(std::all_of(mn.ks.begin(), mn.ks.end(), [](int k) { return k == 3; }));
        QVERIFY(std::all_of(mn.d.begin(), mn.d.end(), [](int d) { return d == 0; }));
        SubnetConfig mx = s.labMaxConfig(160);
        QCOMPARE(mx.wid, 1);
        QCOMPARE(mx.image_size, 160);
        QVERIFY(std::all_of(mx.e.begin(), mx.e.end(), [](int e) { return e == 6; }));
        QCOMPARE(s.fullMaxConfig(160).wid, 2);
    }
};

QTEST_GUILESS_MAIN(TestArchSampler)
#include "test_arch_sampler.moc"
