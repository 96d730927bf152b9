#include "predict/PredictionMetrics.h"

#include "Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tinyscope {

namespace {

void requireSameLength(const std::vector<double>& x, const std::vector<double>& y)
{
    if (x.size() != y.size())
        throw InputError("predicted and measured accuracies differ in length: " + std::to_string(x.size()) + " vs " +
                         std::to_string(y.size()));
}

// Number of pairs i < j with v[i] == v[j] in a sorted range.
double tiedPairs(const std::vector<double>& sorted)
{
    double pairs = 0;
    std::size_t run = 1;
    for (std::size_t i = 1; i <= sorted.size(); ++i) {
        if (i < sorted.size() && sorted[i] == sorted[i - 1]) {
            ++run;
        } else {
            pairs += static_cast<double>(run) * static_cast<double>(run - 1) / 2.0;
            run = 1;
        }
    }
    return pairs;
}

// Sorts v ascending by merge sort and returns the number of swaps (inversions) it needed.
double mergeCountInversions(std::vector<double>& v)
{
    std::vector<double> tmp(v.size());
    double inversions = 0;
    for (std::size_t width = 1; width < v.size(); width *= 2) {
        for (std::size_t lo = 0; lo < v.size(); lo += 2 * width) {
            std::size_t mid = std::min(lo + width, v.size()), hi = std::min(lo + 2 * width, v.size());
            std::size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (v[j] < v[i]) {
                    inversions += static_cast<double>(mid - i);
                    tmp[k++] = v[j++];
                } else {
                    tmp[k++] = v[i++];
                }
            }
            while (i < mid) tmp[k++] = v[i++];
            while (j < hi) tmp[k++] = v[j++];
        }
        v.swap(tmp);
    }
    return inversions;
}

}  // namespace

double pearsonR(const std::vector<double>& x, const std::vector<double>& y)
{
    requireSameLength(x, y);
    const double n = static_cast<double>(x.size());
    if (x.size() < 2) return 0;
    double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

double kendallTau(const std::vector<double>& x, const std::vector<double>& y)
{
    requireSameLength(x, y);
    const std::size_t n = x.size();
    if (n < 2) return 0;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]);
    });
    std::vector<double> xs(n), ys(n);
    for (std::size_t i = 0; i < n; ++i) {
        xs[i] = x[order[i]];
        ys[i] = y[order[i]];
    }
    const double n0 = static_cast<double>(n) * static_cast<double>(n - 1) / 2.0;
    const double tiesX = tiedPairs(xs);
    // Pairs tied in both x and y.
    double tiesXY = 0;
    for (std::size_t i = 0, run = 1; i < n; ++i) {
        if (i + 1 < n && xs[i + 1] == xs[i] && ys[i + 1] == ys[i]) {
            ++run;
        } else {
            tiesXY += static_cast<double>(run) * static_cast<double>(run - 1) / 2.0;
            run = 1;
        }
    }
    // Within x-ties y is already ascending, so inversions count exactly the discordant pairs.
    const double swaps = mergeCountInversions(ys);
    const double tiesY = tiedPairs(ys);
    const double concordantMinusDiscordant = n0 - tiesX - tiesY + tiesXY - 2 * swaps;
    const double denom = std::sqrt((n0 - tiesX) * (n0 - tiesY));
    return denom > 0 ? concordantMinusDiscordant / denom : 0;
}

PredictionMetrics measurePredictions(const std::vector<double>& predicted, const std::vector<double>& measured)
{
    requireSameLength(predicted, measured);
    PredictionMetrics m;
    m.count = predicted.size();
    if (m.count == 0) return m;
    double abs = 0, sq = 0;
    for (std::size_t i = 0; i < m.count; ++i) {
        double e = predicted[i] - measured[i];
        abs += std::fabs(e);
        sq += e * e;
    }
    m.mae = abs / static_cast<double>(m.count);
    m.rmse = std::sqrt(sq / static_cast<double>(m.count));
    m.pearson = pearsonR(predicted, measured);
    m.kendall_tau = kendallTau(predicted, measured);
    return m;
}

Json toJson(const PredictionMetrics& m)
{
    return Json{{"count", m.count}, {"mae", m.mae}, {"rmse", m.rmse}, {"pearson", m.pearson}, {"kendall_tau", m.kendall_tau}};
}

PredictionMetrics predictionMetricsFromJson(const JsonPath& p)
{
    PredictionMetrics m;
    m.count = static_cast<std::size_t>(p["count"].asInt64());
    m.mae = p["mae"].asDouble();
    m.rmse = p["rmse"].asDouble();
    m.pearson = p["pearson"].asDouble();
    m.kendall_tau = p["kendall_tau"].asDouble();
    return m;
}

}  // namespace tinyscope
