#include "compress/WeightHistogram.h"

#include <algorithm>
#include <numeric>

namespace tinyscope {

std::int64_t WeightHistogram::total() const { return std::accumulate(counts.begin(), counts.end(), std::int64_t{0}); }

WeightHistogram weightHistogram(const std::vector<float>& values, int bins, bool nonzeroOnly)
{
    WeightHistogram h;
    bool any = false;
    for (float v : values) {
        if (nonzeroOnly && v == 0) continue;
        if (!any) h.lo = h.hi = v, any = true;
        h.lo = std::min<double>(h.lo, v);
        h.hi = std::max<double>(h.hi, v);
    }
    if (!any || bins < 1) return h;
    if (h.hi == h.lo) bins = 1;
    h.counts.assign(static_cast<std::size_t>(bins), 0);
    const double width = (h.hi - h.lo) / bins;
    for (float v : values) {
        if (nonzeroOnly && v == 0) continue;
        const int b = width > 0 ? std::min(bins - 1, static_cast<int>((v - h.lo) / width)) : 0;
        ++h.counts[static_cast<std::size_t>(b)];
    }
    return h;
}

}  // namespace tinyscope
