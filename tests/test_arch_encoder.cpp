// ArchEncoder: the lab's 128-dim one-hot layout (MCUNET_SPACE.md §5) on all 25 reference
// subnets, exact decoding, round trips, and clear errors for invalid encodings.
#include "TestSupport.h"

#include "Error.h"
#include "space/ArchEncoder.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

using namespace tinyscope;

class TestArchEncoder : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");

private Q_SLOTS:
    void layoutIs128Dims()
    {
        ArchEncoder enc(space);
        QCOMPARE(enc.dims(), 128);
        QCOMPARE(enc.widthOffset(), 5);
        QCOMPARE(enc.kernelOffset(0), 8);
        QCOMPARE(enc.kernelOffset(19), 65);
        QCOMPARE(enc.expandOffset(0), 68);
        QCOMPARE(enc.expandOffset(19), 125);
    }

    void matchesReferenceIndicesAndBits()
    {
        REQUIRE_SHARED();
        Json ref = readJsonFile(test::sharedPath("reference/mcunet-vww/cost_reference.json"));
        ArchEncoder enc(space);
        for (const Json& e : ref["entries"]) {
            SubnetConfig c = SubnetConfig::fromJson(e["config"], space, "entry");
            QCOMPARE(enc.oneHotIndices(c), e["arch_encoder_one_hot_indices"].get<std::vector<int>>());
            QCOMPARE(enc.bits(c), e["arch_encoder_feature_bits"].get<std::string>());
            // decode(encode(c)) is c with inactive entries zeroed and d[5] = 1.
            SubnetConfig back = enc.decodeBits(enc.bits(c));
            QVERIFY(back == c.canonical(space));
            QCOMPARE(back.d[5], 1);
            QCOMPARE(enc.decodeIndices(enc.oneHotIndices(c)), back);
        }
    }

    void minHas22OnesAndMax42()
    {
        ArchEncoder enc(space);
        ArchSampler s(space);
        QCOMPARE(static_cast<int>(enc.oneHotIndices(s.minConfig(96)).size()), 22);
        QCOMPARE(static_cast<int>(enc.oneHotIndices(s.fullMaxConfig(160)).size()), 42);
    }

    void roundTripOnRandomSubnets()
    {
        ArchEncoder enc(space);
        ArchSampler s(space);
        PyRandom rng(7);
        for (int i = 0; i < 500; ++i) {
            SubnetConfig c = s.random(rng);
            SubnetConfig back = enc.decode(enc.encode(c));
            QVERIFY(back == c.canonical(space));
            QCOMPARE(enc.encode(back), enc.encode(c));
        }
    }

    void invalidEncodingsAreRejectedWithTheGroup()
    {
        ArchEncoder enc(space);
        std::vector<float> f = enc.encode(ArchSampler(space).minConfig(96));
        auto expectError = [&](std::vector<float> v, const char* fragment) {
            try {
                enc.decode(v);
                QFAIL("no error");
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find(fragment) != std::string::npos, e.what());
            }
        };
        auto two = f;
        two[1] = 1.0f;
        expectError(two, "resolution has more than one bit");
        auto none = f;
        none[5] = 0.0f;
        expectError(none, "width has no bit");
        auto half = f;
        half[enc.expandOffset(0) + 0] = 0.0f;
        expectError(half, "block 0 has a kernel bit but no expand bit");
        expectError(std::vector<float>(127, 0.0f), "uses 128");
        QVERIFY_THROWS_EXCEPTION(InputError, enc.decodeBits("01x"));
        QVERIFY_THROWS_EXCEPTION(InputError, enc.decodeIndices({0, 5, 200}));
    }
};

QTEST_GUILESS_MAIN(TestArchEncoder)
#include "test_arch_encoder.moc"
