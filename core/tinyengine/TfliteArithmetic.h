#pragma once
// The integer arithmetic of TensorFlow Lite (Micro)'s reference int8 kernels, written from their
// definitions (kernels/internal/common.h, quantization_util.cc, reference/integer_ops/*.h) for
// Int8Forward's Int8Arithmetic::Tflite: a real multiplier becomes an int32 fixed-point
// multiplier and a shift (QuantizeMultiplier: frexp, round half away from zero of q·2^31), and
// is applied with gemmlowp's saturating rounding doubling high multiply followed by a rounding
// right shift (the default "double rounding" build, without TFLITE_SINGLE_ROUNDING). ADD
// rescales both inputs to a common scale with left_shift = 20; MUL multiplies the offset inputs
// and requantises once; AVERAGE_POOL_2D divides rounding half away from zero. Torch-free.
#include <cstdint>

namespace tinyscope {

struct QuantizedMultiplier {
    std::int32_t multiplier = 0;
    int shift = 0;   // > 0: left shift, < 0: right shift
};

QuantizedMultiplier quantizeMultiplier(double real);
std::int32_t saturatingRoundingDoublingHighMul(std::int32_t a, std::int32_t b);
std::int32_t roundingDivideByPOT(std::int32_t x, int exponent);
// x · real, as TFLite computes it with quantizeMultiplier(real).
std::int32_t multiplyByQuantizedMultiplier(std::int32_t x, const QuantizedMultiplier& m);

// ADD of two int8 tensors with scales s1, s2 into scale sy (float32 tensor scales).
struct TfliteAdd {
    QuantizedMultiplier in1, in2, out;
    int left_shift = 20;
    TfliteAdd(float s1, float s2, float sy);
    // x1, x2 already minus their zero points; returns the output before its zero point and clamp.
    std::int32_t apply(std::int32_t x1, std::int32_t x2) const;
};

// MUL: (x1 − z1)(x2 − z2) · s1·s2/sy.
inline QuantizedMultiplier tfliteMulMultiplier(float s1, float s2, float sy)
{
    return quantizeMultiplier(static_cast<double>(s1) * static_cast<double>(s2) / static_cast<double>(sy));
}

// Conv / depthwise / fully connected: TFLite's effective scale of output channel o from the
// float32 tensor scales of the file (input, weight channel, output).
inline double tfliteEffectiveScale(float sx, float sw, float sy)
{
    return static_cast<double>(sx) * static_cast<double>(sw) / static_cast<double>(sy);
}

// AVERAGE_POOL_2D's division of a window sum by its element count.
inline std::int32_t tfliteAverage(std::int32_t sum, std::int32_t count)
{
    return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

}  // namespace tinyscope
