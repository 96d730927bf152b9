#include "compress/KMeansQuantization.h"

#include "Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace tinyscope {

namespace {

// A double in [0, 1) from the generator's top 53 bits (std::uniform_real_distribution's algorithm
// is the library's choice; this is not).
double unitDraw(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * (1.0 / 9007199254740992.0); }

// The nearest centroid of a value (ties: the lower index), by binary search over the centroids
// sorted by value, then index: in one dimension the nearest is the last centroid below the value or
// the first at or above it, and the first of a run of equal centroids has the lowest index. The
// distances are the brute-force scan's (|v − c| in double), so the labels are the scan's exactly.
class NearestCentroid {
public:
    explicit NearestCentroid(const std::vector<float>& centroids)
    {
        for (std::size_t k = 0; k < centroids.size(); ++k) sorted_.push_back({centroids[k], static_cast<std::uint8_t>(k)});
        std::sort(sorted_.begin(), sorted_.end(), [](const Entry& a, const Entry& b) { return a.value < b.value || (a.value == b.value && a.index < b.index); });
        runStart_.resize(sorted_.size());
        for (std::size_t i = 0; i < sorted_.size(); ++i)
            runStart_[i] = i > 0 && sorted_[i].value == sorted_[i - 1].value ? runStart_[i - 1] : i;
    }
    std::uint8_t operator()(float v) const
    {
        const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), v, [](const Entry& e, float x) { return e.value < x; });
        const std::size_t p = static_cast<std::size_t>(it - sorted_.begin());
        if (p == sorted_.size()) return sorted_[runStart_[p - 1]].index;
        const Entry& right = sorted_[p];   // the first of its run: lower_bound
        if (p == 0) return right.index;
        const Entry& left = sorted_[runStart_[p - 1]];
        const double dl = std::fabs(static_cast<double>(v) - left.value), dr = std::fabs(static_cast<double>(v) - right.value);
        if (dl < dr) return left.index;
        if (dr < dl) return right.index;
        return std::min(left.index, right.index);
    }

private:
    struct Entry {
        float value;
        std::uint8_t index;
    };
    std::vector<Entry> sorted_;
    std::vector<std::size_t> runStart_;
};

// k-means++: the first centroid a uniform pick, each next one drawn with probability proportional
// to the squared distance to the nearest centroid so far. Stops early when every weight sits on a
// centroid (fewer distinct values than clusters).
std::vector<float> seedCentroids(const float* w, std::size_t n, std::size_t k, std::uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::vector<float> c{w[static_cast<std::size_t>(unitDraw(g) * static_cast<double>(n))]};
    std::vector<double> d2(n, std::numeric_limits<double>::infinity());
    while (c.size() < k) {
        // The squared distance to the nearest centroid so far: only the newest one can lower it.
        double total = 0;
        const double x = c.back();
        for (std::size_t i = 0; i < n; ++i) {
            d2[i] = std::min(d2[i], (static_cast<double>(w[i]) - x) * (static_cast<double>(w[i]) - x));
            total += d2[i];
        }
        if (total == 0) break;
        double pick = unitDraw(g) * total;
        std::size_t i = 0;
        for (; i + 1 < n; ++i) {
            if (pick < d2[i]) break;
            pick -= d2[i];
        }
        while (d2[i] == 0 && i > 0) --i;   // never a weight already on a centroid (rounding at the end)
        c.push_back(w[i]);
    }
    return c;
}

}  // namespace

Codebook kmeansQuantize(const float* w, std::size_t n, int bits, std::uint64_t seed, int maxIterations)
{
    if (bits < 1 || bits > 8) throw InputError("bit width " + std::to_string(bits) + " is outside 1–8");
    if (n == 0) throw InputError("an empty tensor has no codebook");
    Codebook c;
    c.bits = bits;
    c.centroids = seedCentroids(w, n, std::size_t{1} << bits, seed);
    c.labels.assign(n, 0);
    {
        const NearestCentroid nearest(c.centroids);
        for (std::size_t i = 0; i < n; ++i) c.labels[i] = nearest(w[i]);
    }
    for (c.iterations = 0; c.iterations < maxIterations;) {
        updateCodebook(c, w, n);
        ++c.iterations;
        bool changed = false;
        const NearestCentroid nearest(c.centroids);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint8_t l = nearest(w[i]);
            changed |= l != c.labels[i];
            c.labels[i] = l;
        }
        if (!changed) {
            c.converged = true;
            break;
        }
    }
    return c;
}

std::vector<float> reconstruct(const Codebook& c)
{
    std::vector<float> r(c.labels.size());
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = c.centroids[c.labels[i]];
    return r;
}

void updateCodebook(Codebook& c, const float* w, std::size_t n)
{
    std::vector<double> sum(c.centroids.size(), 0.0);
    std::vector<std::size_t> count(c.centroids.size(), 0);
    for (std::size_t i = 0; i < n; ++i) {
        sum[c.labels[i]] += w[i];
        ++count[c.labels[i]];
    }
    for (std::size_t k = 0; k < c.centroids.size(); ++k)
        if (count[k]) c.centroids[k] = static_cast<float>(sum[k] / static_cast<double>(count[k]));
}

std::int64_t codebookBits(const Codebook& c) { return static_cast<std::int64_t>(c.centroids.size()) * 32; }

}  // namespace tinyscope
