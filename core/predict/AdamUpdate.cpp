#include "predict/AdamUpdate.h"

#include <cmath>

namespace tinyscope {

AdamConstants AdamConstants::at(double lr, std::int64_t step)
{
    AdamConstants c;
    const double bc1 = 1.0 - std::pow(0.9, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(0.999, static_cast<double>(step));
    c.step_size = static_cast<float>(lr / bc1);
    c.bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    return c;
}

namespace {

// Compiled for AVX-512, AVX2 and the baseline; the loader picks the best at start-up. This file
// is built with -fno-math-errno (sqrt becomes one instruction) and -ffp-contract=off.
__attribute__((target_clones("avx512f", "avx2", "default"))) void update(float* __restrict p, const float* __restrict g0,
                                                                          const float* __restrict g1, float* __restrict m,
                                                                          float* __restrict v, std::int64_t n, float beta1,
                                                                          float beta2, float eps, float stepSize, float bc2Sqrt)
{
    const float a1 = 1 - beta1, a2 = 1 - beta2;
    for (std::int64_t i = 0; i < n; ++i) {   // the g1 test is hoisted out of the loop (-O3 unswitching)
        const float g = g1 ? g0[i] + g1[i] : g0[i];
        const float mi = beta1 * m[i] + a1 * g;
        const float vi = beta2 * v[i] + a2 * g * g;
        m[i] = mi;
        v[i] = vi;
        p[i] -= stepSize * mi / (std::sqrt(vi) / bc2Sqrt + eps);
    }
}

}  // namespace

void adamUpdate(float* p, const float* g0, const float* g1, float* m, float* v, std::int64_t lo, std::int64_t hi,
                const AdamConstants& c)
{
    if (hi <= lo) return;
    update(p + lo, g0 + lo, g1 ? g1 + lo : nullptr, m + lo, v + lo, hi - lo, c.beta1, c.beta2, c.eps, c.step_size, c.bc2_sqrt);
}

}  // namespace tinyscope
