#include "tinyengine/TfliteArithmetic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tinyscope {

QuantizedMultiplier quantizeMultiplier(double real)
{
    QuantizedMultiplier m;
    if (real == 0.0) return m;
    const double q = std::frexp(real, &m.shift);
    auto fixed = static_cast<std::int64_t>(std::round(q * static_cast<double>(1LL << 31)));
    if (fixed == (1LL << 31)) {
        fixed /= 2;
        ++m.shift;
    }
    if (m.shift < -31) {   // flushed to zero, as TFLite does
        m.shift = 0;
        fixed = 0;
    }
    m.multiplier = static_cast<std::int32_t>(fixed);
    return m;
}

std::int32_t saturatingRoundingDoublingHighMul(std::int32_t a, std::int32_t b)
{
    const bool overflow = a == b && a == std::numeric_limits<std::int32_t>::min();
    const std::int64_t ab = static_cast<std::int64_t>(a) * static_cast<std::int64_t>(b);
    const std::int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    const auto high = static_cast<std::int32_t>((ab + nudge) / (1LL << 31));
    return overflow ? std::numeric_limits<std::int32_t>::max() : high;
}

std::int32_t roundingDivideByPOT(std::int32_t x, int exponent)
{
    const std::int32_t mask = static_cast<std::int32_t>((1LL << exponent) - 1);
    const std::int32_t remainder = x & mask;
    const std::int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

std::int32_t multiplyByQuantizedMultiplier(std::int32_t x, const QuantizedMultiplier& m)
{
    const int left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
    // x · 2^left in int32 (wrapping, as the kernel's int32 product does on every target).
    const auto shifted = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << left);
    return roundingDivideByPOT(saturatingRoundingDoublingHighMul(shifted, m.multiplier), right);
}

TfliteAdd::TfliteAdd(float s1, float s2, float sy)
{
    const double twiceMax = 2 * static_cast<double>(std::max(s1, s2));
    in1 = quantizeMultiplier(static_cast<double>(s1) / twiceMax);
    in2 = quantizeMultiplier(static_cast<double>(s2) / twiceMax);
    out = quantizeMultiplier(twiceMax / (static_cast<double>(1 << left_shift) * static_cast<double>(sy)));
}

std::int32_t TfliteAdd::apply(std::int32_t x1, std::int32_t x2) const
{
    const std::int32_t a = multiplyByQuantizedMultiplier(x1 * (1 << left_shift), in1);
    const std::int32_t b = multiplyByQuantizedMultiplier(x2 * (1 << left_shift), in2);
    return multiplyByQuantizedMultiplier(a + b, out);
}

}  // namespace tinyscope
