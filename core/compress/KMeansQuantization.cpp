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

// The nearest centroid (ties: the lower index).
std::uint8_t nearest(float v, const std::vector<float>& centroids)
{
    std::size_t best = 0;
    double bestD = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < centroids.size(); ++k) {
        const double d = std::fabs(static_cast<double>(v) - centroids[k]);
        if (d < bestD) bestD = d, best = k;
    }
    return static_cast<std::uint8_t>(best);
}

// k-means++: the first centroid a uniform pick, each next one drawn with probability proportional
// to the squared distance to the nearest centroid so far. Stops early when every weight sits on a
// centroid (fewer distinct values than clusters).
std::vector<float> seedCentroids(const float* w, std::size_t n, std::size_t k, std::uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::vector<float> c{w[static_cast<std::size_t>(unitDraw(g) * static_cast<double>(n))]};
    std::vector<double> d2(n);
    while (c.size() < k) {
        double total = 0;
        for (std::size_t i = 0; i < n; ++i) {
            double best = std::numeric_limits<double>::infinity();
            for (float x : c) best = std::min(best, (static_cast<double>(w[i]) - x) * (static_cast<double>(w[i]) - x));
            d2[i] = best;
            total += best;
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
    for (std::size_t i = 0; i < n; ++i) c.labels[i] = nearest(w[i], c.centroids);
    for (c.iterations = 0; c.iterations < maxIterations;) {
        updateCodebook(c, w, n);
        ++c.iterations;
        bool changed = false;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint8_t l = nearest(w[i], c.centroids);
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
