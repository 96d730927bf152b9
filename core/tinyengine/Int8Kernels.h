#pragma once
// The per-element arithmetic of Int8Forward's ops, one inline function per op and arithmetic
// (Int8Arithmetic in Int8Forward.h): Int8Forward's loops and the batched oneDNN int8 plan
// (nn/onednn/OneDnnInt8Plan.h) both call these, so the two cannot compute different values.
// Every function takes integer operands (an int8 value, or an exact int32 sum) and the op's
// constants, and returns the int32 result before any clamp. Torch-free.
#include "tinyengine/TfliteArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tinyscope::int8k {

inline std::int32_t clamp8(std::int32_t v) { return std::min<std::int32_t>(127, std::max<std::int32_t>(-128, v)); }

// float -> int32 as the Cortex-M's VCVT does it: toward zero, saturating (NaN -> 0).
inline std::int32_t truncateSaturating(float f)
{
    if (!(f == f)) return 0;
    if (f >= 2147483648.0f) return INT32_MAX;
    if (f <= -2147483648.0f) return INT32_MIN;
    return static_cast<std::int32_t>(f);
}

// One input pixel (normalised float) as int8: clamp(round(x / s_x) + z_x), `inv` = 1 / s_x.
inline std::int32_t quantizeInput(float x, float inv, std::int32_t zero)
{
    return clamp8(static_cast<std::int32_t>(std::nearbyint(x * inv)) + zero);
}

// Conv requantisation of one output: `acc` = Σ w · (x − zx), the channel's bias, scale and the
// output zero point.
inline std::int32_t convExact(std::int32_t acc, float bias, float scale, std::int32_t zy)
{
    return static_cast<std::int32_t>(std::nearbyint((static_cast<float>(acc) + bias) * scale)) + zy;
}
// TinyEngine: the bias starts the int32 accumulator and the sum wraps (MIT parks dead channels at
// bias -2^31); the product with the scale is truncated.
inline std::int32_t convTinyEngine(std::int32_t acc, std::uint32_t bias, float scale, std::int32_t zy)
{
    const auto wrapped = static_cast<std::int32_t>(bias + static_cast<std::uint32_t>(acc));
    return truncateSaturating(static_cast<float>(wrapped) * scale) + zy;
}
// TFLM's ConvPerChannel: int32 acc + bias, fixed-point requantisation.
inline std::int32_t convTflite(std::int32_t acc, std::uint32_t bias, const QuantizedMultiplier& m, std::int32_t zy)
{
    return multiplyByQuantizedMultiplier(static_cast<std::int32_t>(bias + static_cast<std::uint32_t>(acc)), m) + zy;
}

// Global average pooling of `hw` values summing to `sum`.
inline std::int32_t meanExact(double sum, int hw)
{
    return static_cast<std::int32_t>(std::nearbyint(static_cast<float>(sum) / static_cast<float>(hw)));
}
// TinyEngine's avg_pooling and TFLite's AVERAGE_POOL_2D: rounded integer division.
inline std::int32_t meanRounded(std::int32_t sum, int hw)
{
    sum += sum > 0 ? hw / 2 : -(hw / 2);
    return sum / hw;
}

// Add / multiply of two int8 operands in the float arithmetics (Exact, TinyEngine): zero points
// z1, z2, fzy and scales s1, s2, sy as the graph stores them (float).
inline std::int32_t addMulFloat(bool mul, bool tinyEngine, std::int32_t a, std::int32_t b, float z1, float z2, float s1, float s2,
                                float sy, float fzy)
{
    const float t1 = (static_cast<float>(a) - z1) * s1, t2 = (static_cast<float>(b) - z2) * s2;
    const float u = mul ? t1 * t2 : t1 + t2;
    if (tinyEngine && !mul) {   // add_fpreq: round(u / s_y + z_y), half away from zero
        const float q = u / sy + fzy;
        return static_cast<std::int32_t>(std::round(static_cast<double>(q)));
    }
    return static_cast<std::int32_t>(std::nearbyint(u / sy) + fzy);
}

// Add / multiply in TFLite's integer arithmetic: zero points z1, z2, zy as integers; MUL's one
// multiplier, ADD's rescaling.
inline std::int32_t addMulTflite(bool mul, std::int32_t a, std::int32_t b, std::int32_t z1, std::int32_t z2, std::int32_t zy,
                                 const QuantizedMultiplier* mulMultiplier, const TfliteAdd* add)
{
    const std::int32_t x1 = a - z1, x2 = b - z2;
    return (mul ? multiplyByQuantizedMultiplier(x1 * x2, *mulMultiplier) : add->apply(x1, x2)) + zy;
}

}  // namespace tinyscope::int8k
