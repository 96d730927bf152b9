#pragma once
// The int8 plan's element passes (OneDnnInt8Plan runs them between its convs): the conv sums'
// requantisation, the input's quantisation, add / multiply (also with a per-channel gate), the
// mean. Each pass picks its instruction set here, once at load time — AVX-512, AVX2, or the
// baseline compiled twice (AVX2 and x86-64, target_clones) — and computes, value for value, what
// Int8Forward's loops compute (test_onednn_int8 compares every tensor, also bounded to AVX2).
// Values are int8 stored minus a slot's shift: as float32 integers, or as uint8 (int8 + 128).
// No oneDNN, no LibTorch.
#include "tinyengine/Int8Forward.h"
#include "tinyengine/TfliteArithmetic.h"

#include <cstddef>
#include <cstdint>
#include <numeric>

namespace tinyscope::int8pass {

// The vector passes read per-channel values repeated over lcm(C, 64) values, so a run of pixels ×
// C values is one flat run of vectors.
inline std::size_t repeatPeriod(std::size_t C) { return std::lcm(C, std::size_t{64}); }

bool avx512();       // the passes run on AVX-512 (onednn::hasAvx512, bounded by ONEDNN_MAX_CPU_ISA)
bool vectorised();   // on AVX-512 or AVX2: the exact requantisation reads RequantArgs' repeated arrays

// out = x − d over `count` values (d: the conv's zero point minus the stored shift); returns the
// largest |x − d|.
float shiftAndMax(const float* x, std::size_t count, float d, float* out);

// A conv's sums of `images` × `plane` positions × O channels (NHWC; float32 integers or int32)
// plus, where `comp` is given, the compensation comp[q·compStride + o] (compStride 0 when it is the
// same at every position), requantised in the arithmetic, clamped to int8 and stored minus
// `shiftOut`: the conv + truncation pair of the graph.
struct RequantArgs {
    const std::int32_t* comp;
    std::size_t compStride;
    std::size_t images, plane;
    int O;
    const float* bias;             // exact
    const std::uint32_t* biasBits; // TinyEngine / TFLite
    const float* scale;
    const QuantizedMultiplier* mult;
    std::int32_t zy, shiftOut;
    // The vector passes of the exact arithmetic: bias, scale and a per-channel comp repeated over
    // `period` = repeatPeriod(O) values (0: not repeated; the scalar loops run).
    const float* biasRep = nullptr;
    const float* scaleRep = nullptr;
    const std::int32_t* compRep = nullptr;
    std::size_t period = 0;
};
void requantize(const float* acc, const RequantArgs& r, Int8Arithmetic arith, float* out);
void requantize(const std::int32_t* acc, const RequantArgs& r, Int8Arithmetic arith, std::uint8_t* out);

// The input images (n × C × hw floats, NCHW) quantised (x · inv rounded, + zero, clamped) and
// stored minus `shift`, NHWC.
void quantizeInput(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, float* out);
void quantizeInput(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, std::uint8_t* out);

// The mean over each image's hw pixels of C channels (NHWC): the exact arithmetic's or, `rounded`,
// TinyEngine's and TFLite's; operands stored minus shiftIn, results minus shiftOut.
void mean(const float* x, int images, int hw, int C, std::int32_t shiftIn, std::int32_t shiftOut, bool rounded, float* out);
void mean(const std::uint8_t* x, int images, int hw, int C, std::int32_t shiftIn, std::int32_t shiftOut, bool rounded, std::uint8_t* out);

// An add or multiply (step `s`) of `images` maps of hw × C values and its truncation; an operand
// flagged as a gate is one value per channel, broadcast over the pixels. Operands are stored minus
// shifts[0], shifts[1], the result minus shifts[2]. `gateTerms`: room for repeatPeriod(C) floats.
void addMul(const float* a, const float* b, bool aGate, bool bGate, int images, std::size_t hw, std::size_t C, Int8Arithmetic arith,
            const Int8Step& s, const std::int32_t shifts[3], float* gateTerms, float* out);
void addMul(const std::uint8_t* a, const std::uint8_t* b, bool aGate, bool bGate, int images, std::size_t hw, std::size_t C,
            Int8Arithmetic arith, const Int8Step& s, const std::int32_t shifts[3], float* gateTerms, std::uint8_t* out);

}  // namespace tinyscope::int8pass
