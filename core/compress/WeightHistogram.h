#pragma once
// The distribution of a network's weights as the labs plot it (plot_weight_distribution: a
// histogram of every conv / linear weight, optionally of the non-zero ones only), as counts over
// equal bins between the smallest and the largest value. Torch-free and Qt-free.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tinyscope {

struct WeightHistogram {
    double lo = 0, hi = 0;                // the range the bins cover
    std::vector<std::int64_t> counts;     // equal bins over [lo, hi]; the last includes hi
    std::int64_t total() const;
};

// `bins` bins over the values' own range (one bin when they are all equal; none without values).
// `nonzeroOnly`: zeros left out (the lab's count_nonzero_only=True, after pruning).
WeightHistogram weightHistogram(const std::vector<float>& values, int bins, bool nonzeroOnly = false);

}  // namespace tinyscope
