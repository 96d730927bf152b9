#include "compress/Pruning.h"

#include "Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tinyscope {

std::vector<std::uint8_t> magnitudeMask(const float* w, std::size_t n, double sparsity)
{
    if (std::isnan(sparsity)) throw InputError("sparsity is not a number");
    sparsity = std::min(std::max(0.0, sparsity), 1.0);
    if (sparsity == 1.0) return std::vector<std::uint8_t>(n, 0);
    std::vector<std::uint8_t> mask(n, 1);
    if (sparsity == 0.0 || n == 0) return mask;
    // Python: round(num_elements * sparsity) — the double product, rounded half to even.
    const auto numZeros = static_cast<std::size_t>(std::nearbyint(static_cast<double>(n) * sparsity));
    if (numZeros == 0) return mask;   // the lab's kthvalue(0) raises; nothing to prune
    std::vector<float> importance(n);
    for (std::size_t i = 0; i < n; ++i) importance[i] = std::fabs(w[i]);
    std::vector<float> sorted = importance;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(numZeros - 1), sorted.end());
    const float threshold = sorted[numZeros - 1];   // kthvalue(num_zeros): the num_zeros-th smallest
    for (std::size_t i = 0; i < n; ++i) mask[i] = importance[i] > threshold ? 1 : 0;
    return mask;
}

std::vector<std::uint8_t> pruneByMagnitude(float* w, std::size_t n, double sparsity)
{
    std::vector<std::uint8_t> mask = magnitudeMask(w, n, sparsity);
    applyMask(w, mask);
    return mask;
}

void applyMask(float* w, const std::vector<std::uint8_t>& mask)
{
    for (std::size_t i = 0; i < mask.size(); ++i)
        if (!mask[i]) w[i] = 0.0f;
}

std::size_t countNonZero(const float* w, std::size_t n)
{
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) k += w[i] != 0.0f;
    return k;
}

std::int64_t modelSizeBits(std::int64_t elements, int bits) { return elements * bits; }

int channelsToKeep(int channels, double ratio)
{
    if (std::isnan(ratio) || ratio < 0.0 || ratio > 1.0) throw InputError("a pruning ratio is between 0 and 1");
    return static_cast<int>(std::nearbyint(static_cast<double>(channels) * (1.0 - ratio)));
}

std::vector<double> inputChannelImportance(const float* w, int outputs, int inputs, std::size_t rest)
{
    std::vector<double> sum(static_cast<std::size_t>(inputs), 0.0);
    for (int o = 0; o < outputs; ++o)
        for (int i = 0; i < inputs; ++i) {
            const float* p = w + (static_cast<std::size_t>(o) * static_cast<std::size_t>(inputs) + static_cast<std::size_t>(i)) * rest;
            double s = 0;
            for (std::size_t k = 0; k < rest; ++k) s += static_cast<double>(p[k]) * p[k];
            sum[static_cast<std::size_t>(i)] += s;
        }
    for (double& s : sum) s = std::sqrt(s);
    return sum;
}

std::vector<int> channelOrderByImportance(const std::vector<double>& importance)
{
    std::vector<int> order(importance.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return importance[static_cast<std::size_t>(a)] > importance[static_cast<std::size_t>(b)];
    });
    return order;
}

}  // namespace tinyscope
