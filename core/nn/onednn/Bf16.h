#pragma once
// bfloat16 values as the bf16 plans store them (OneDnnPlan with OneDnnDtype::Bf16; our kernels in
// DepthwiseConv.h and PointwiseConv.h read and write them): the upper half of a float32's bits,
// the layout of oneDNN's bf16 memories. Scalar conversions; the vector ones are in Avx512.h.
#include <cstdint>
#include <cstring>

namespace tinyscope::onednn {

// A bfloat16 value's bits.
enum class Bf16 : std::uint16_t {};

// A float's nearest bfloat16 (ties to even; finite values): what oneDNN's reorder stores for a bf16
// weight, and what vcvtneps2bf16 gives.
inline Bf16 nearestBf16(float v)
{
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return static_cast<Bf16>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// A bfloat16's value (exact).
inline float floatOf(Bf16 b)
{
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

}  // namespace tinyscope::onednn
