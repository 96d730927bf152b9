#pragma once
// One Adam update (torch.optim.Adam without weight decay or amsgrad) over a flat float array, in
// the element-wise order PyTorch uses: m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²;
// p −= (lr / bc1) · m / (√v / √bc2 + ε). The gradient is g0 + g1 (two shards; g1 may be null).
// Vectorised (sqrt and division are correctly rounded in every instruction set, and the file is
// compiled without FMA contraction), so the result is the same bit for bit on every CPU.
#include <cstdint>

namespace tinyscope {

struct AdamConstants {
    float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
    float step_size = 0;        // lr / (1 − β1^t)
    float bc2_sqrt = 1;         // √(1 − β2^t)
    static AdamConstants at(double lr, std::int64_t step);   // torch.optim.Adam's defaults at step t ≥ 1
};

// Updates p[lo, hi), m[lo, hi), v[lo, hi).
void adamUpdate(float* p, const float* g0, const float* g1, float* m, float* v, std::int64_t lo, std::int64_t hi,
                const AdamConstants& c);

}  // namespace tinyscope
