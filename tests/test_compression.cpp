// Labs 1–2's formulas (issue 50, core/compress): magnitude pruning, channel counts and order,
// n-bit linear quantization, k-means codebooks — on tensors whose answers are written out by hand.
#include "TestSupport.h"

#include "compress/KMeansQuantization.h"
#include "compress/LinearQuantization.h"
#include "compress/Pruning.h"
#include "compress/SparsityChoice.h"
#include "compress/WeightHistogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace tinyscope;

namespace {

// Lab 1's test tensor (test_fine_grained_prune), row-major 5 × 5.
const std::vector<float> kLabTensor{-0.46f, -0.40f, 0.39f, 0.19f,  0.37f,  0.00f, 0.40f,  0.17f, -0.15f, 0.16f, -0.20f, -0.23f, 0.36f,
                                    0.25f,  0.03f,  0.24f, 0.41f, 0.07f,  0.13f,  -0.15f, 0.48f, -0.09f, -0.36f, 0.12f,  0.45f};

std::vector<int> maskOf(const std::vector<float>& w, double sparsity)
{
    const std::vector<std::uint8_t> m = magnitudeMask(w.data(), w.size(), sparsity);
    return std::vector<int>(m.begin(), m.end());
}

}  // namespace

class TestCompression : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void magnitudePruningIsTheLabs()
    {
        // The lab's own check: sparsity 0.75 of 25 → round(18.75) = 19 zeros; the 19th smallest |w|
        // is 0.39, so the six weights above it stay.
        const std::vector<int> expect75{1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
        QCOMPARE(maskOf(kLabTensor, 0.75), expect75);
        // Question 3: 10 non-zeros of 25 is sparsity 0.6 → 15 zeros; the 15th smallest is 0.25.
        std::vector<float> w = kLabTensor;
        pruneByMagnitude(w.data(), w.size(), 0.6);
        QCOMPARE(countNonZero(w.data(), w.size()), std::size_t(10));
        for (std::size_t i = 0; i < w.size(); ++i) QCOMPARE(w[i] != 0.0f, std::fabs(kLabTensor[i]) > 0.25f);
        QCOMPARE(modelSizeBits(static_cast<std::int64_t>(countNonZero(w.data(), w.size())), 32), std::int64_t(320));
    }

    void pruningEdges()
    {
        const std::vector<float> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        // round(10 × 0.25) = round(2.5) = 2 (half to even): the threshold is 2, 8 stay.
        QCOMPARE(maskOf(ten, 0.25), (std::vector<int>{0, 0, 1, 1, 1, 1, 1, 1, 1, 1}));
        // round(6 × 0.25) = round(1.5) = 2.
        QCOMPARE(maskOf({1, 2, 3, 4, 5, 6}, 0.25), (std::vector<int>{0, 0, 1, 1, 1, 1}));
        // Ties at the threshold are pruned: half of four equal weights asked, all four go.
        QCOMPARE(maskOf({-1, 1, 1, -1}, 0.5), (std::vector<int>{0, 0, 0, 0}));
        // Clamped to [0, 1]; 1 prunes all, 0 none; round(2 × 0.25) = 0 prunes none (the lab raises).
        QCOMPARE(maskOf(ten, 1.7), std::vector<int>(10, 0));
        QCOMPARE(maskOf(ten, 1.0), std::vector<int>(10, 0));
        QCOMPARE(maskOf(ten, -0.3), std::vector<int>(10, 1));
        QCOMPARE(maskOf(ten, 0.0), std::vector<int>(10, 1));
        QCOMPARE(maskOf({1, 2}, 0.25), (std::vector<int>{1, 1}));
        // A re-applied mask keeps pruned weights at zero after an update.
        std::vector<float> w = ten;
        const std::vector<std::uint8_t> m = pruneByMagnitude(w.data(), w.size(), 0.5);
        for (float& v : w) v += 0.5f;
        applyMask(w.data(), m);
        QCOMPARE(countNonZero(w.data(), w.size()), std::size_t(5));
        QCOMPARE(w[0], 0.0f);
        QCOMPARE(w[9], 10.5f);
    }

    void channelPruningCountsAndOrder()
    {
        QCOMPARE(channelsToKeep(32, 0.3), 22);   // round(22.4)
        QCOMPARE(channelsToKeep(10, 0.25), 8);   // round(7.5): half to even
        QCOMPARE(channelsToKeep(6, 0.25), 4);    // round(4.5)
        QCOMPARE(channelsToKeep(16, 0.0), 16);
        QCOMPARE(channelsToKeep(16, 1.0), 0);
        QVERIFY(test::inputErrorOf([] { channelsToKeep(16, 1.5); }).contains(QStringLiteral("between 0 and 1")));
        // Next layer's weight [O = 2][I = 3][1]: norms over w[:, i] are 5, 1, 5 → order 0, 2, 1.
        const std::vector<float> w{3, 0, 4, 4, 1, 3};
        const std::vector<double> imp = inputChannelImportance(w.data(), 2, 3, 1);
        QCOMPARE(imp, (std::vector<double>{5, 1, 5}));
        QCOMPARE(channelOrderByImportance(imp), (std::vector<int>{0, 2, 1}));
        // Over a kernel's extent too: [1][2][2 × 2].
        const std::vector<float> k{1, 1, 1, 1, 0, 0, 0, 3};
        QCOMPARE(inputChannelImportance(k.data(), 1, 2, 4), (std::vector<double>{2, 3}));
    }

    void nBitRangesAndZeroPoints()
    {
        QCOMPARE(quantizedRange(8).min, -128);
        QCOMPARE(quantizedRange(8).max, 127);
        QCOMPARE(quantizedRange(4).min, -8);
        QCOMPARE(quantizedRange(4).max, 7);
        QCOMPARE(quantizedRange(2).min, -2);
        QCOMPARE(quantizedRange(2).max, 1);
        QCOMPARE(quantizedRange(1).min, -1);
        QCOMPARE(quantizedRange(1).max, 0);
        QVERIFY(test::inputErrorOf([] { quantizedRange(9); }).contains(QStringLiteral("outside 1–8")));
        QVERIFY(test::inputErrorOf([] { quantizedRange(0); }).contains(QStringLiteral("outside 1–8")));
        // [-1, 0, 2] at 8 bits: scale 3 / 255, zero point −128 + 85 = −43; 2 / scale = 170 clamps to 127.
        const std::vector<float> r{-1, 0, 2};
        const ScaleZeroPoint s8 = scaleAndZeroPoint(r.data(), r.size(), 8);
        QCOMPARE(s8.scale, 3.0 / 255.0);
        QCOMPARE(s8.zero_point, -43);
        QCOMPARE(linearQuantize(r.data(), r.size(), 8, s8.scale, s8.zero_point), (std::vector<std::int8_t>{-128, -43, 127}));
        // At 2 bits: scale 1, zero point −2 + 1 = −1.
        const ScaleZeroPoint s2 = scaleAndZeroPoint(r.data(), r.size(), 2);
        QCOMPARE(s2.scale, 1.0);
        QCOMPARE(s2.zero_point, -1);
        QCOMPARE(linearQuantize(r.data(), r.size(), 2, s2.scale, s2.zero_point), (std::vector<std::int8_t>{-2, -1, 1}));
        // The zero point −2 − (−0.5) / (1 / 3) = −0.5 rounds half to even: 0.
        const std::vector<float> half{-0.5f, 0.5f};
        QCOMPARE(scaleAndZeroPoint(half.data(), half.size(), 2).zero_point, 0);
        // Beyond the range a zero point is clamped: all-positive data at 2 bits.
        const std::vector<float> pos{3, 6};
        QCOMPARE(scaleAndZeroPoint(pos.data(), pos.size(), 2).zero_point, -2);
    }

    void perChannelWeightsAreSymmetric()
    {
        // Two output channels at 2 bits (q_max 1): scales 1 and 2; 0.5 and −0.25 round half to even.
        const std::vector<float> w{0.5f, -1.0f, 0.25f, 2.0f, 0.0f, -0.5f};
        const PerChannelQuantized p = quantizeWeightPerChannel(w.data(), 2, 3, 2);
        QCOMPARE(p.scales, (std::vector<double>{1.0, 2.0}));
        QCOMPARE(p.q, (std::vector<std::int8_t>{0, -1, 0, 1, 0, 0}));
        QCOMPARE(dequantizePerChannel(p, 3), (std::vector<float>{0, -1, 0, 2, 0, 0}));
        // A channel of zeros takes the lab's floor 5e-7 / q_max, not a division by zero.
        const std::vector<float> z{0, 0};
        QCOMPARE(quantizeWeightPerChannel(z.data(), 1, 2, 8).scales.front(), 5e-7 / 127);
        // At 8 bits the reconstruction is within half a step of every weight.
        std::mt19937 g(3);
        std::vector<float> big(64 * 9);
        for (float& v : big) v = static_cast<float>(static_cast<int>(g() % 2001) - 1000) / 997.0f;
        const PerChannelQuantized q8 = quantizeWeightPerChannel(big.data(), 64, 9, 8);
        const std::vector<float> back = dequantizePerChannel(q8, 9);
        for (std::size_t i = 0; i < big.size(); ++i) QVERIFY(std::fabs(back[i] - big[i]) <= q8.scales[i / 9] * 0.5 + 1e-7);
    }

    void kmeansCodebooksHoldTheirInvariants()
    {
        // Two clear clusters at 1 bit: their means.
        const std::vector<float> two{0.0f, 0.25f, 0.5f, 10.0f, 10.25f, 10.5f};
        const Codebook c1 = kmeansQuantize(two.data(), two.size(), 1, 0);
        QVERIFY(c1.converged);
        std::vector<float> cents = c1.centroids;
        std::sort(cents.begin(), cents.end());
        QCOMPARE(cents, (std::vector<float>{0.25f, 10.25f}));
        // Fewer distinct values than clusters: reconstructed exactly.
        const std::vector<float> few{1, 1, 2, 2, 1};
        QCOMPARE(reconstruct(kmeansQuantize(few.data(), few.size(), 3, 0)), few);
        // Random weights at 2, 3 and 4 bits: ≤ 2^n values, nearest centroid, centroids = means.
        std::mt19937 g(11);
        std::vector<float> w(2000);
        for (float& v : w) v = static_cast<float>(static_cast<int>(g() % 20001) - 10000) / 10000.0f;
        for (int bits : {2, 3, 4}) {
            const Codebook c = kmeansQuantize(w.data(), w.size(), bits, 7);
            QVERIFY(c.converged);
            QCOMPARE(c.centroids.size(), std::size_t{1} << bits);
            const std::vector<float> r = reconstruct(c);
            QVERIFY(std::set<float>(r.begin(), r.end()).size() <= (std::size_t{1} << bits));
            std::vector<double> sum(c.centroids.size(), 0.0);
            std::vector<int> count(c.centroids.size(), 0);
            for (std::size_t i = 0; i < w.size(); ++i) {
                for (float x : c.centroids) QVERIFY(std::fabs(static_cast<double>(w[i]) - c.centroids[c.labels[i]]) <= std::fabs(static_cast<double>(w[i]) - x));
                sum[c.labels[i]] += w[i];
                ++count[c.labels[i]];
            }
            for (std::size_t k = 0; k < c.centroids.size(); ++k) {
                QVERIFY(count[k] > 0);
                QCOMPARE(c.centroids[k], static_cast<float>(sum[k] / count[k]));
            }
            // Seeded: the same codebook again.
            const Codebook again = kmeansQuantize(w.data(), w.size(), bits, 7);
            QCOMPARE(again.centroids, c.centroids);
            QCOMPARE(again.labels, c.labels);
            QCOMPARE(codebookBits(c), std::int64_t(32) << bits);
        }
    }

    void qatUpdatesCentroidsToTheMeansOfTheirWeights()
    {
        const std::vector<float> w{0.0f, 0.5f, 10.0f, 10.5f};
        Codebook c = kmeansQuantize(w.data(), w.size(), 1, 0);
        const std::vector<std::uint8_t> labels = c.labels;
        const std::vector<float> moved{1.0f, 2.0f, 20.0f, 21.0f};   // after an optimizer step
        updateCodebook(c, moved.data(), moved.size());
        QCOMPARE(c.labels, labels);   // labels kept
        QCOMPARE(c.centroids[c.labels[0]], 1.5f);
        QCOMPARE(c.centroids[c.labels[2]], 20.5f);
        QVERIFY(test::inputErrorOf([&] { kmeansQuantize(w.data(), w.size(), 9); }).contains(QStringLiteral("outside 1–8")));
    }

    // Three layers scanned at 0.5 / 0.9 (dense top-1 90): the robust one takes 0.9 at a budget of 0
    // points, the others follow as the budget grows; the first budget that reaches the target wins.
    void sparsitiesAreChosenWithOneBudget()
    {
        const std::vector<LayerScan> scan = {{"a", 1000, {0.5, 0.9}, {90, 90}},   // prunes for free
                                             {"b", 1000, {0.5, 0.9}, {89, 70}},   // 1 point at 0.5, 20 at 0.9
                                             {"c", 100, {0.5, 0.9}, {80, 50}}};   // sensitive
        // Target 1,300 non-zeros of 2,100 + 50 others: a at 0.9 (100 left), b at 0.5 (500), c dense (100) + 50 = 750.
        SparsityChoice c = chooseSparsities(scan, 90, 50, 1300);
        QVERIFY(c.reached);
        QCOMPARE(c.sparsity, std::vector<double>({0.9, 0.0, 0.0}));   // budget 0: a alone, 1,250 non-zeros
        QCOMPARE(c.nonzero, std::int64_t{100 + 1000 + 100 + 50});
        QCOMPARE(c.drop, 0.0);
        c = chooseSparsities(scan, 90, 50, 800);
        QCOMPARE(c.sparsity, std::vector<double>({0.9, 0.5, 0.0}));   // budget 1 point
        QCOMPARE(c.nonzero, std::int64_t{100 + 500 + 100 + 50});
        QCOMPARE(c.drop, 1.0);
        // The fewest non-zeros: every layer at 0.9 = 100 + 100 + 10 + 50; below that, not reached.
        c = chooseSparsities(scan, 90, 50, 200);
        QVERIFY(!c.reached);
        QCOMPARE(c.smallest, std::int64_t{260});
    }

    void histogramsCountEveryValueOnce()
    {
        const WeightHistogram h = weightHistogram({-1, 0, 0, 0.5, 1}, 4);
        QCOMPARE(h.lo, -1.0);
        QCOMPARE(h.hi, 1.0);
        QCOMPARE(h.counts, std::vector<std::int64_t>({1, 0, 2, 2}));   // [−1,−.5) [−.5,0) [0,.5) [.5,1]
        QCOMPARE(weightHistogram({-1, 0, 0, 0.5, 1}, 4, true).total(), std::int64_t{3});
        QVERIFY(weightHistogram({}, 4).counts.empty());
        QCOMPARE(weightHistogram({2, 2}, 8).counts, std::vector<std::int64_t>({2}));
    }
};

QTEST_GUILESS_MAIN(TestCompression)
#include "test_compression.moc"
