#include "nn/onednn/OneDnnInt8Plan.h"

#include "Error.h"
#include "nn/ShardPool.h"
#include "nn/onednn/Avx512.h"
#include "nn/onednn/DepthwiseConv.h"
#include "nn/onednn/Int8StemConv.h"
#include "nn/onednn/OneDnnCommon.h"
#include "nn/OneDnnInfo.h"
#include "space/SubnetLayout.h"
#include "tinyengine/Int8Kernels.h"

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

namespace tinyscope {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using onednn::Buffer;

using onednn::kFloatExact;

// The element loops. Each is compiled twice (AVX2 and the x86-64 baseline, chosen at load time):
// the AVX2 copy vectorises the rounding (vroundps) that the baseline calls libm for. This file is
// compiled with -fno-trapping-math (core/CMakeLists.txt), without which GCC vectorises none of
// them; it changes no value (floating-point exception flags only). Neither target has FMA, so no
// multiply-add is contracted: both copies compute what Int8Forward's loops compute, element by
// element (the test compares every tensor).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TS_CLONES
#endif

// out = x − d over `count` values (d: the conv's zero point minus the stored shift); returns the
// largest |x − d|.
TS_CLONES float shiftAndMax(const float* x, std::size_t count, float d, float* out)
{
    float most = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const float v = x[i] - d;
        out[i] = v;
        const float a = std::fabs(v);
        most = a > most ? a : most;
    }
    return most;
}

// Requantise the conv sums of `images` × `plane` positions × O channels (NHWC; float32 integers or
// int32) plus, where `comp` is given, the compensation comp[q·compStride + o] (see Conv::comp;
// compStride 0 when it is the same at every position), clamp to int8 and store minus `shiftOut`:
// the conv + truncation pair of the graph.
template <typename A, typename T, typename F>
inline __attribute__((always_inline)) void requantLoop(const A* __restrict acc, const std::int32_t* __restrict comp, std::size_t compStride,
                                                       std::size_t images, std::size_t plane, int O, std::int32_t shiftOut,
                                                       T* __restrict out, F requant)
{
    const std::size_t Os = static_cast<std::size_t>(O);
    for (std::size_t b = 0; b < images; ++b)
        for (std::size_t q = 0; q < plane; ++q) {
            const std::size_t row = (b * plane + q) * Os;
            const A* __restrict ar = acc + row;
            T* __restrict orow = out + row;
            if (comp) {
                const std::int32_t* __restrict cr = comp + q * compStride;
                for (int o = 0; o < O; ++o)
                    orow[o] = static_cast<T>(int8k::clamp8(requant(static_cast<std::int32_t>(ar[o]) + cr[o], o)) - shiftOut);
            } else {
                for (int o = 0; o < O; ++o) orow[o] = static_cast<T>(int8k::clamp8(requant(static_cast<std::int32_t>(ar[o]), o)) - shiftOut);
            }
        }
}

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
    // The AVX-512 exact path: bias, scale and a per-channel comp repeated over `period` = lcm(O, 64)
    // values, so an image's plane × O sums are one flat run of 64- and 16-value vectors.
    const float* biasRep = nullptr;
    const float* scaleRep = nullptr;
    const std::int32_t* compRep = nullptr;
    std::size_t period = 0;
};

// The constants are copied into restrict locals: a uint8 output may alias anything, and a store
// through it would otherwise make the compiler reload them and give up vectorising.
#define TS_REQUANT(NAME, A, T, EXPR)                                                                                          \
    TS_CLONES void NAME(const A* acc, const RequantArgs& r, T* out)                                                           \
    {                                                                                                                         \
        const float* __restrict bias = r.bias;                                                                                \
        const std::uint32_t* __restrict biasBits = r.biasBits;                                                                \
        const float* __restrict scale = r.scale;                                                                              \
        const std::int32_t zy = r.zy;                                                                                         \
        (void)bias, (void)biasBits;                                                                                           \
        requantLoop(acc, r.comp, r.compStride, r.images, r.plane, r.O, r.shiftOut, out, [=](std::int32_t a, int o) { return EXPR; }); \
    }
TS_REQUANT(requantExactF, float, float, int8k::convExact(a, bias[o], scale[o], zy))
TS_REQUANT(requantExactU, std::int32_t, std::uint8_t, int8k::convExact(a, bias[o], scale[o], zy))
TS_REQUANT(requantTinyEngineF, float, float, int8k::convTinyEngine(a, biasBits[o], scale[o], zy))
TS_REQUANT(requantTinyEngineU, std::int32_t, std::uint8_t, int8k::convTinyEngine(a, biasBits[o], scale[o], zy))
#undef TS_REQUANT
// The exact requantisation with AVX-512 intrinsics over an image's flat run of plane × O sums (the
// last vector masked; per-channel values from RequantArgs' repeated arrays): the auto-vectorised
// loops above stay on AVX2 and spend most of their time packing int32 to uint8.
// Element by element it is int8k::convExact: int32 sum (+ comp, int32), converted to float
// (round to nearest, as static_cast<float>), + bias, × scale (two roundings, no fused multiply-add),
// rounded to nearest even (vcvtps2dq under the default rounding mode, as std::nearbyint; out of
// range both give INT32_MIN), + zy, clamped to int8, minus the output's shift. The test compares
// every tensor with Int8Forward's loops.
// 16 values as int32 (masked): int32 sums, float32 integers (sums or a float slot), a uint8 slot.
TS_AVX512 inline __m512i int32s16(const std::int32_t* a, __mmask16 m) { return _mm512_maskz_loadu_epi32(m, a); }
TS_AVX512 inline __m512i int32s16(const float* a, __mmask16 m) { return _mm512_cvttps_epi32(_mm512_maskz_loadu_ps(m, a)); }
TS_AVX512 inline __m512i int32s16(const std::uint8_t* p, __mmask16 m) { return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p)); }
// clamp8(y) − shift, 16 at a time.
TS_AVX512 inline __m512i clamp8MinusShift(__m512i y, __m512i shift)
{
    return _mm512_sub_epi32(_mm512_min_epi32(_mm512_max_epi32(y, _mm512_set1_epi32(-128)), _mm512_set1_epi32(127)), shift);
}
TS_AVX512 inline void store16(std::uint8_t* out, __mmask16 m, __m512i v) { _mm_mask_storeu_epi8(out, m, _mm512_cvtepi32_epi8(v)); }
TS_AVX512 inline void store16(float* out, __mmask16 m, __m512i v) { _mm512_mask_storeu_ps(out, m, _mm512_cvtepi32_ps(v)); }
// clamp8(y) + 128 of 4 × 16 int32 values as 64 uint8 (a uint8 slot's storage), in order: saturating
// packs to int16 (order- and clamp-preserving), + 128 with int16 saturation (only values ≥ 255
// saturate), saturating pack to uint8 = clamp to [0, 255]; the packs interleave 128-bit lanes, a
// dword permutation restores the order. Equal to clamp8MinusShift(y, −128) for every int32 y.
TS_AVX512 inline void store64Uint8(std::uint8_t* out, __m512i y0, __m512i y1, __m512i y2, __m512i y3)
{
    const __m512i up = _mm512_set1_epi16(128);
    const __m512i lo = _mm512_adds_epi16(_mm512_packs_epi32(y0, y1), up), hi = _mm512_adds_epi16(_mm512_packs_epi32(y2, y3), up);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_si512(out, _mm512_permutexvar_epi32(order, _mm512_packus_epi16(lo, hi)));
}

// A flat run of `count` results clamped to int8 and stored minus `shiftOut`: y(k, mask, ph) gives
// the 16 int32 values from value k on (before the clamp; ph = k mod `period`, a multiple of 64). Into
// a uint8 slot (shift −128) 64 at a time with one pack (store64Uint8: vpmovdb's stores are slow on
// some CPUs), then 16 at a time, the last masked.
template <typename T, typename Y>
TS_AVX512 inline void storeClamped(T* out, std::size_t count, std::int32_t shiftOut, std::size_t period, const Y& y)
{
    std::size_t k = 0, ph = 0;
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        if (shiftOut == -128)
            for (; k + 64 <= count; k += 64) {
                store64Uint8(out + k, y(k, 0xFFFF, ph), y(k + 16, 0xFFFF, ph + 16), y(k + 32, 0xFFFF, ph + 32), y(k + 48, 0xFFFF, ph + 48));
                ph += 64;
                if (ph == period) ph = 0;
            }
    }
    const __m512i shift = _mm512_set1_epi32(shiftOut);
    for (; k < count; k += 16) {
        const __mmask16 m = onednn::tailMask(count - k);
        store16(out + k, m, clamp8MinusShift(y(k, m, ph), shift));
        ph += 16;
        if (ph == period) ph = 0;
    }
}

struct RequantVectors {
    __m512i zy;
    const std::int32_t* comp;   // at k (per position) or at the phase, or null
    const float* bias;
    const float* scale;
};
// convExact(a + comp) + zy of 16 sums, before the clamp; `ph` the channel phase, `k` the value.
template <typename A>
TS_AVX512 inline __m512i requant16(const A* a, __mmask16 m, const RequantVectors& v, std::size_t compAt, std::size_t ph)
{
    __m512i x = int32s16(a, m);
    if (v.comp) x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(m, v.comp + compAt));
    const __m512 f = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(x), _mm512_load_ps(v.bias + ph)), _mm512_load_ps(v.scale + ph));
    return _mm512_add_epi32(_mm512_cvtps_epi32(f), v.zy);
}

template <typename A, typename T>
TS_AVX512 void requantExactAvx512(const A* acc, const RequantArgs& r, T* out)
{
    const std::size_t total = r.plane * static_cast<std::size_t>(r.O);   // one image's sums, NHWC: flat
    // Locals, not loads through `r` in the loop: a uint8 store may alias anything (see TS_REQUANT).
    const bool perPosition = r.comp && r.compStride != 0;
    const RequantVectors v{_mm512_set1_epi32(r.zy), r.comp ? (perPosition ? r.comp : r.compRep) : nullptr, r.biasRep, r.scaleRep};
    for (std::size_t b = 0; b < r.images; ++b) {
        const A* a0 = acc + b * total;
        storeClamped(out + b * total, total, r.shiftOut, r.period,
                     [&](std::size_t k, __mmask16 m, std::size_t ph) TS_AVX512 { return requant16(a0 + k, m, v, perPosition ? k : ph, ph); });
    }
}

const bool kAvx512 = onednn::hasAvx512();

// The same passes for CPUs with AVX2 but not AVX-512 (AVX2 laptops, with or without AVX-VNNI):
// 8 values per vector, the same operations in the same order, so the same values as
// requantExactAvx512 and quantizeInputAvx512 (and as Int8Forward's loops: the test compares every
// tensor, also bounded to AVX2). The target has no FMA, so nothing is contracted. Run where
// AVX-512 is not (kAvx512 first); on AVX2 the auto-vectorised loops spent 57 % of an int8 run
// of the smallest VWW subnet packing and rounding (docs/ONEDNN.md, "AVX2 passes").
#define TS_AVX2 __attribute__((target("avx2")))
const bool kAvx2 = onednn::hasAvx2();

TS_AVX2 inline __m256i int32s8(const std::int32_t* a) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)); }
TS_AVX2 inline __m256i int32s8(const float* a) { return _mm256_cvttps_epi32(_mm256_loadu_ps(a)); }
TS_AVX2 inline __m256i int32s8(const std::uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
TS_AVX2 inline __m256i clamp8MinusShift8(__m256i y, __m256i shift)
{
    return _mm256_sub_epi32(_mm256_min_epi32(_mm256_max_epi32(y, _mm256_set1_epi32(-128)), _mm256_set1_epi32(127)), shift);
}
// clamp8(y) + 128 of 4 × 8 int32 values as 32 uint8, in order (store64Uint8's steps on 256-bit
// vectors: the packs interleave 128-bit lanes, a dword permutation restores the order).
TS_AVX2 inline void store32Uint8(std::uint8_t* out, __m256i y0, __m256i y1, __m256i y2, __m256i y3)
{
    const __m256i up = _mm256_set1_epi16(128);
    const __m256i lo = _mm256_adds_epi16(_mm256_packs_epi32(y0, y1), up), hi = _mm256_adds_epi16(_mm256_packs_epi32(y2, y3), up);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permutevar8x32_epi32(_mm256_packus_epi16(lo, hi), order));
}

// storeClamped on 8-value vectors: y(k, ph) gives 8 int32 results from value k on (before the
// clamp; ph = k mod `period`, a multiple of 32), one(k, ph) the single result at k. Into a uint8
// slot (shift −128) 32 at a time; float slots 8 at a time; the last few values one by one.
template <typename T, typename Y, typename One>
TS_AVX2 inline void storeClampedAvx2(T* out, std::size_t count, std::int32_t shiftOut, std::size_t period, const Y& y, const One& one)
{
    std::size_t k = 0, ph = 0;
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        if (shiftOut == -128)
            for (; k + 32 <= count; k += 32) {
                store32Uint8(out + k, y(k, ph), y(k + 8, ph + 8), y(k + 16, ph + 16), y(k + 24, ph + 24));
                ph += 32;
                if (ph == period) ph = 0;
            }
    } else {
        const __m256i shift = _mm256_set1_epi32(shiftOut);
        for (; k + 8 <= count; k += 8) {
            _mm256_storeu_ps(out + k, _mm256_cvtepi32_ps(clamp8MinusShift8(y(k, ph), shift)));
            ph += 8;
            if (ph == period) ph = 0;
        }
    }
    for (; k < count; ++k) {
        out[k] = static_cast<T>(int8k::clamp8(one(k, ph)) - shiftOut);
        if (++ph == period) ph = 0;
    }
}

// requantExactAvx512 on 8-value vectors (the same RequantArgs, its repeated per-channel arrays).
template <typename A, typename T>
TS_AVX2 void requantExactAvx2(const A* acc, const RequantArgs& r, T* out)
{
    const std::size_t total = r.plane * static_cast<std::size_t>(r.O);
    const bool perPosition = r.comp && r.compStride != 0;
    const std::int32_t* comp = r.comp ? (perPosition ? r.comp : r.compRep) : nullptr;
    const float* bias = r.biasRep;
    const float* scale = r.scaleRep;
    const std::int32_t zy = r.zy;
    const __m256i vzy = _mm256_set1_epi32(zy);
    for (std::size_t b = 0; b < r.images; ++b) {
        const A* a0 = acc + b * total;
        storeClampedAvx2(
            out + b * total, total, r.shiftOut, r.period,
            [&](std::size_t k, std::size_t ph) TS_AVX2 {
                __m256i x = int32s8(a0 + k);
                if (comp) x = _mm256_add_epi32(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(comp + (perPosition ? k : ph))));
                const __m256 f = _mm256_mul_ps(_mm256_add_ps(_mm256_cvtepi32_ps(x), _mm256_loadu_ps(bias + ph)), _mm256_loadu_ps(scale + ph));
                return _mm256_add_epi32(_mm256_cvtps_epi32(f), vzy);
            },
            [&](std::size_t k, std::size_t ph) {
                const std::int32_t c = comp ? comp[perPosition ? k : ph] : 0;
                return int8k::convExact(static_cast<std::int32_t>(a0[k]) + c, bias[ph], scale[ph], zy);
            });
    }
}

// quantizeInputAvx512 on 8 pixels of each channel at a time (C ≤ 4): the same x · inv, rounding
// (vcvtps2dq, nearest even), + zero, clamp and shift; interleaved into NHWC value by value.
template <typename T>
TS_AVX2 void quantizeInputAvx2(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, T* out)
{
    const __m256 vinv = _mm256_set1_ps(inv);
    const __m256i z = _mm256_set1_epi32(zero), sh = _mm256_set1_epi32(shift);
    alignas(32) std::int32_t q[4][8];
    for (int b = 0; b < n; ++b) {
        std::size_t p = 0;
        for (; p + 8 <= hw; p += 8) {
            for (int c = 0; c < C; ++c) {
                const __m256 x = _mm256_loadu_ps(images + (static_cast<std::size_t>(b) * C + c) * hw + p);
                _mm256_store_si256(reinterpret_cast<__m256i*>(q[c]), clamp8MinusShift8(_mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(x, vinv)), z), sh));
            }
            T* dst = out + (static_cast<std::size_t>(b) * hw + p) * C;
            for (int i = 0; i < 8; ++i)
                for (int c = 0; c < C; ++c) dst[i * C + c] = static_cast<T>(q[c][i]);
        }
        for (; p < hw; ++p)
            for (int c = 0; c < C; ++c)
                out[(static_cast<std::size_t>(b) * hw + p) * C + c] =
                    static_cast<T>(int8k::quantizeInput(images[(static_cast<std::size_t>(b) * C + c) * hw + p], inv, zero) - shift);
    }
}

// The exact arithmetic's add / multiply and its truncation on `count` adjacent values, 16 at a time:
// element for element int8k::addMulFloat (Exact) then clamp8 — (float(a) − z1) · s1 and the same
// for b, their product or sum, ÷ sy (IEEE division), rounded to nearest even (as std::nearbyint),
// + fzy, truncated to int32 (INT32_MIN out of range, as the scalar cast), clamped; each operation
// separate, nothing fused.
struct AddMulArgs {
    bool mul;
    float z1, z2, s1, s2, sy, fzy;
    std::int32_t sa, sb, so;
};
// The length of gateExactAvx512's repeated gate terms for C channels.
inline std::size_t gateTermsPeriod(std::size_t C) { return std::lcm(C, std::size_t{64}); }
struct AddMulVectors {
    __m512 z1, z2, s1, s2, sy, fzy;
    __m512i sa, sb;
    bool mul;
    TS_AVX512 explicit AddMulVectors(const AddMulArgs& g)
        : z1(_mm512_set1_ps(g.z1)), z2(_mm512_set1_ps(g.z2)), s1(_mm512_set1_ps(g.s1)), s2(_mm512_set1_ps(g.s2)), sy(_mm512_set1_ps(g.sy)),
          fzy(_mm512_set1_ps(g.fzy)), sa(_mm512_set1_epi32(g.sa)), sb(_mm512_set1_epi32(g.sb)), mul(g.mul)
    {
    }
    // (float(x + shift) − z) · s of 16 stored values.
    template <typename T>
    TS_AVX512 static __m512 term(const T* x, __mmask16 m, __m512i shift, __m512 z, __m512 s)
    {
        return _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(int32s16(x, m), shift)), z), s);
    }
    // The result before the clamp, from the two terms.
    TS_AVX512 __m512i result(__m512 t1, __m512 t2) const
    {
        const __m512 u = mul ? _mm512_mul_ps(t1, t2) : _mm512_add_ps(t1, t2);
        return _mm512_cvttps_epi32(_mm512_add_ps(_mm512_roundscale_ps(_mm512_div_ps(u, sy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fzy));
    }
};

template <typename T>
TS_AVX512 void addMulExactAvx512(const T* a, const T* b, std::size_t count, const AddMulArgs& g, T* out)
{
    const AddMulVectors v(g);
    storeClamped(out, count, g.so, 64, [&](std::size_t k, __mmask16 m, std::size_t) TS_AVX512 {
        return v.result(AddMulVectors::term(a + k, m, v.sa, v.z1, v.s1), AddMulVectors::term(b + k, m, v.sb, v.z2, v.s2));
    });
}

// A map (pixels × C values, one image) added to or multiplied by a per-channel gate (C values,
// broadcast over the pixels), and the truncation: element for element addMulExactAvx512 with b the
// gate — its term (float(b) − z2) · s2 computed once per channel instead of once per element (the
// same operations, so the same floats), repeated over lcm(C, 64) values in `gateTerms` so the map
// is one flat run of vectors. t1 · t2 and t1 + t2 are the same floats either way round, so a gate
// that is the op's first operand is passed as `gate` with its zero point, scale and shift swapped
// into z2, s2, sb.
template <typename T>
TS_AVX512 void gateExactAvx512(const T* map, const T* gate, std::size_t pixels, std::size_t C, const AddMulArgs& g, float* gateTerms, T* out)
{
    const AddMulVectors v(g);
    for (std::size_t c = 0; c < C; c += 16) {
        const __mmask16 m = onednn::tailMask(C - c);
        _mm512_mask_storeu_ps(gateTerms + c, m, AddMulVectors::term(gate + c, m, v.sb, v.z2, v.s2));
    }
    const std::size_t period = gateTermsPeriod(C);
    for (std::size_t i = C; i < period; ++i) gateTerms[i] = gateTerms[i - C];
    storeClamped(out, pixels * C, g.so, period, [&](std::size_t k, __mmask16 m, std::size_t ph) TS_AVX512 {
        return v.result(AddMulVectors::term(map + k, m, v.sa, v.z1, v.s1), _mm512_loadu_ps(gateTerms + ph));
    });
}

// addMulExactAvx512 and gateExactAvx512 on 8-value vectors (CPUs with AVX2 but not AVX-512): the
// same terms, result and truncation; the last few values one by one through the same operations.
struct AddMulAvx2 {
    __m256 z1, z2, s1, s2, sy, fzy;
    __m256i sa, sb;
    AddMulArgs g;
    TS_AVX2 explicit AddMulAvx2(const AddMulArgs& args)
        : z1(_mm256_set1_ps(args.z1)), z2(_mm256_set1_ps(args.z2)), s1(_mm256_set1_ps(args.s1)), s2(_mm256_set1_ps(args.s2)),
          sy(_mm256_set1_ps(args.sy)), fzy(_mm256_set1_ps(args.fzy)), sa(_mm256_set1_epi32(args.sa)), sb(_mm256_set1_epi32(args.sb)), g(args)
    {
    }
    template <typename T>
    TS_AVX2 static __m256 term(const T* x, __m256i shift, __m256 z, __m256 s)
    {
        return _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(int32s8(x), shift)), z), s);
    }
    TS_AVX2 __m256i result(__m256 t1, __m256 t2) const
    {
        const __m256 u = g.mul ? _mm256_mul_ps(t1, t2) : _mm256_add_ps(t1, t2);
        return _mm256_cvttps_epi32(_mm256_add_ps(_mm256_round_ps(_mm256_div_ps(u, sy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fzy));
    }
    // One value (the last few of a run): int8k::addMulFloat, the formula the vectors compute.
    template <typename T>
    std::int32_t one(T a, T b) const
    {
        return int8k::addMulFloat(g.mul, false, static_cast<std::int32_t>(a) + g.sa, static_cast<std::int32_t>(b) + g.sb, g.z1, g.z2, g.s1, g.s2, g.sy, g.fzy);
    }
};

template <typename T>
TS_AVX2 void addMulExactAvx2(const T* a, const T* b, std::size_t count, const AddMulArgs& g, T* out)
{
    const AddMulAvx2 v(g);
    storeClampedAvx2(
        out, count, g.so, 32,
        [&](std::size_t k, std::size_t) TS_AVX2 { return v.result(AddMulAvx2::term(a + k, v.sa, v.z1, v.s1), AddMulAvx2::term(b + k, v.sb, v.z2, v.s2)); },
        [&](std::size_t k, std::size_t) { return v.one(a[k], b[k]); });
}

template <typename T>
TS_AVX2 void gateExactAvx2(const T* map, const T* gate, std::size_t pixels, std::size_t C, const AddMulArgs& g, float* gateTerms, T* out)
{
    const AddMulAvx2 v(g);
    for (std::size_t c = 0; c < C; ++c) gateTerms[c] = (static_cast<float>(static_cast<std::int32_t>(gate[c]) + g.sb) - g.z2) * g.s2;
    const std::size_t period = gateTermsPeriod(C);
    for (std::size_t i = C; i < period; ++i) gateTerms[i] = gateTerms[i - C];
    storeClampedAvx2(
        out, pixels * C, g.so, period,
        [&](std::size_t k, std::size_t ph) TS_AVX2 { return v.result(AddMulAvx2::term(map + k, v.sa, v.z1, v.s1), _mm256_loadu_ps(gateTerms + ph)); },
        [&](std::size_t k, std::size_t ph) { return v.one(map[k], gate[ph % C]); });
}

// The exact arithmetic's mean over one image's pixels × C stored uint8 values (NHWC), 16 channels
// at a time down all pixels, the last 16 masked: element for element int8k::meanExact of the
// integer sum (the stored values in int32, below 255 · pixels, plus pixels · the input's shift) —
// converted to float (round to nearest even, as the scalar code's int → double → float), ÷ the
// pixel count (IEEE division), rounded to nearest even (as std::nearbyint) — minus the output's
// shift. Like Int8Forward, no clamp: a mean of int8 values is one.
TS_AVX512 void meanExactUint8Avx512(const std::uint8_t* x, std::size_t pixels, std::size_t C, std::int32_t shiftIn, std::int32_t shiftOut,
                                    std::uint8_t* out)
{
    const __m512i shifts = _mm512_set1_epi32(static_cast<std::int32_t>(pixels) * shiftIn), so = _mm512_set1_epi32(shiftOut);
    const __m512 count = _mm512_set1_ps(static_cast<float>(pixels));
    for (std::size_t c = 0; c < C; c += 16) {
        const __mmask16 m = onednn::tailMask(C - c);
        __m512i sum = _mm512_setzero_si512();
        for (std::size_t p = 0; p < pixels; ++p) sum = _mm512_add_epi32(sum, int32s16(x + p * C + c, m));
        const __m512 mean = _mm512_div_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sum, shifts)), count);
        store16(out + c, m, _mm512_sub_epi32(_mm512_cvtps_epi32(mean), so));
    }
}

// The input's quantisation with AVX-512, int8k::quantizeInput on 16 pixels of each channel at a
// time: x · inv (one rounding), rounded to nearest even (as std::nearbyint; INT32_MIN out of range
// for both), + zero, clamped to int8, minus the slot's shift; then interleaved into NHWC. C ≤ 4
// channels (images); 16 pixels per step, the last step masked. Into a uint8 slot the 16 pixels'
// C × 16 bytes are interleaved with byte shuffles (C stores); otherwise value by value.
template <typename T>
TS_AVX512 void quantizeInputAvx512(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, T* out)
{
    const __m512 vinv = _mm512_set1_ps(inv);
    const __m512i z = _mm512_set1_epi32(zero), sh = _mm512_set1_epi32(shift);
    // pick[v][c]: for byte i of the v-th 16-byte output vector (pixel (16v + i) / C, channel
    // (16v + i) % C), the pixel's byte in channel c's vector, or 0x80 (zero) for another channel.
    alignas(16) std::uint8_t pick[4][4][16];
    for (int v = 0; v < C; ++v)
        for (int c = 0; c < C; ++c)
            for (int i = 0; i < 16; ++i) pick[v][c][i] = (16 * v + i) % C == c ? static_cast<std::uint8_t>((16 * v + i) / C) : 0x80;
    const std::size_t shuffled = std::is_same_v<T, std::uint8_t> ? hw / 16 * 16 : 0;
    alignas(64) std::int32_t q[4][16];
    for (int b = 0; b < n; ++b)
        for (std::size_t p = 0; p < hw; p += 16) {
            const int count = static_cast<int>(std::min<std::size_t>(16, hw - p));
            const __mmask16 m = onednn::tailMask(static_cast<std::size_t>(count));
            __m128i bytes[4];
            for (int c = 0; c < C; ++c) {
                const __m512 x = _mm512_maskz_loadu_ps(m, images + (static_cast<std::size_t>(b) * C + c) * hw + p);
                const __m512i y = clamp8MinusShift(_mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x, vinv)), z), sh);
                if (p < shuffled) bytes[c] = _mm512_cvtepi32_epi8(y);
                else _mm512_store_si512(q[c], y);
            }
            T* dst = out + (static_cast<std::size_t>(b) * hw + p) * C;
            if (p < shuffled) {
                for (int v = 0; v < C; ++v) {
                    __m128i o = _mm_shuffle_epi8(bytes[0], _mm_load_si128(reinterpret_cast<const __m128i*>(pick[v][0])));
                    for (int c = 1; c < C; ++c) o = _mm_or_si128(o, _mm_shuffle_epi8(bytes[c], _mm_load_si128(reinterpret_cast<const __m128i*>(pick[v][c]))));
                    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst) + v, o);
                }
                continue;
            }
            for (int i = 0; i < count; ++i)
                for (int c = 0; c < C; ++c) dst[static_cast<std::size_t>(i) * C + c] = static_cast<T>(q[c][i]);
        }
}

template <typename A, typename T>
void requantTflite(const A* acc, const RequantArgs& r, T* out)
{
    requantLoop(acc, r.comp, r.compStride, r.images, r.plane, r.O, r.shiftOut, out,
                [&](std::int32_t a, int o) { return int8k::convTflite(a, r.biasBits[o], r.mult[o], r.zy); });
}

// One row of C channels of an add or multiply and the truncation after it; operands stored minus
// shift[0], shift[1], the result minus shift[2].
template <typename T>
inline __attribute__((always_inline)) void addMulRowBody(const T* __restrict a, const T* __restrict b, std::size_t C, bool mul, bool tinyEngine,
                                                         const Int8Step& s, const std::int32_t shift[3], T* __restrict out)
{
    // Locals, not loads through `s`: a uint8 store may alias anything (see TS_REQUANT).
    const float z1 = s.z1, z2 = s.z2, s1 = s.s1, s2 = s.s2, sy = s.sy, fzy = s.fzy;
    const std::int32_t sa = shift[0], sb = shift[1], so = shift[2];
    for (std::size_t c = 0; c < C; ++c)
        out[c] = static_cast<T>(
            int8k::clamp8(int8k::addMulFloat(mul, tinyEngine, static_cast<std::int32_t>(a[c]) + sa, static_cast<std::int32_t>(b[c]) + sb, z1, z2, s1,
                                             s2, sy, fzy)) -
            so);
}
TS_CLONES void addMulRowF(const float* a, const float* b, std::size_t C, bool mul, bool te, const Int8Step& s, const std::int32_t sh[3], float* out)
{
    addMulRowBody(a, b, C, mul, te, s, sh, out);
}
TS_CLONES void addMulRowU(const std::uint8_t* a, const std::uint8_t* b, std::size_t C, bool mul, bool te, const Int8Step& s, const std::int32_t sh[3],
                          std::uint8_t* out)
{
    addMulRowBody(a, b, C, mul, te, s, sh, out);
}
template <typename T>
void addMulRowTflite(const T* a, const T* b, std::size_t C, bool mul, const Int8Step& s, const std::int32_t shift[3], T* out)
{
    const auto z1 = static_cast<std::int32_t>(s.z1), z2 = static_cast<std::int32_t>(s.z2), zy = static_cast<std::int32_t>(s.fzy);
    for (std::size_t c = 0; c < C; ++c)
        out[c] = static_cast<T>(int8k::clamp8(int8k::addMulTflite(mul, static_cast<std::int32_t>(a[c]) + shift[0],
                                                                   static_cast<std::int32_t>(b[c]) + shift[1], z1, z2, zy,
                                                                   mul ? &s.mult[0] : nullptr, s.add.get())) -
                                shift[2]);
}
inline void addMulRow(const float* a, const float* b, std::size_t C, bool mul, bool te, const Int8Step& s, const std::int32_t sh[3], float* out)
{
    addMulRowF(a, b, C, mul, te, s, sh, out);
}
inline void addMulRow(const std::uint8_t* a, const std::uint8_t* b, std::size_t C, bool mul, bool te, const Int8Step& s, const std::int32_t sh[3],
                      std::uint8_t* out)
{
    addMulRowU(a, b, C, mul, te, s, sh, out);
}

}  // namespace

struct OneDnnInt8Plan::Impl {
    const Int8Forward& f;
    int n = 0;
    bool u8 = false;                   // storage: uint8 (int8 + 128) and oneDNN's u8 × s8 → s32 convs; else float
    Int8Arithmetic arith = Int8Arithmetic::Exact;
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{eng};

    struct Dims {
        int C = 0, H = 1, W = 1;
        std::size_t per() const { return static_cast<std::size_t>(C) * H * W; }
    };
    std::map<int, Dims> dims;          // per value slot, one image
    std::map<int, int> bufferOf;       // value slot -> buffers index
    // Every slot holds its int8 values minus a shift. Float storage: the zero point of the convs
    // that read it, so such a conv reads x − zx (zero-padded) straight from the slot. uint8
    // storage: −128 everywhere (x + 128 in 0..255).
    std::map<int, std::int32_t> shift;
    std::int32_t shiftOf(int slot) const
    {
        if (u8) return -128;
        const auto it = shift.find(slot);
        return it == shift.end() ? 0 : it->second;
    }
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::unique_ptr<Buffer> shifted, acc, scratch;
    std::vector<float> gateTerms;      // gateExactAvx512's repeated per-channel terms (gateTermsPeriod of the widest)
    std::size_t cap = 0;               // values per activation buffer
    bool keep = false, checkAll = false;
    bool fuse = true;                  // OneDnnInt8Expansion::FusedIntoDepthwise

    struct Conv {
        std::optional<dnnl::convolution_forward> prim;
        memory src, dst, weights, scratchpad;
        std::unordered_map<int, memory> args;   // built once; src's handle is set per run (memories are shared handles)
        double sumAbsW = 0;            // largest Σ|w| of one output channel
        bool direct = false;           // float storage: reads its input slot as is (shifted by zx, sums exact)
        // (shift − zx) times the Σ of the weights over the taps that meet the image, per output
        // position and channel (HO·WO × O): the conv of stored values sums w · (x − shift) over those
        // taps only, so Σ w · (x − zx) = conv + comp. Empty when not needed.
        std::vector<std::int32_t> comp;
        bool compPerPosition = false;  // else O values: no padding, every tap meets the image
        // A depthwise conv our kernel sums (DepthwiseConv.h; no oneDNN primitive then).
        std::shared_ptr<onednn::DepthwiseConv> own;
        // A conv of a few input channels (the stem) on our VNNI kernel (Int8StemConv.h, uint8
        // storage): its input bordered with the zero point, so one compensation per channel.
        std::shared_ptr<onednn::Int8StemConv> stem;
        std::vector<float> bias;       // exact arithmetic
        std::vector<std::uint32_t> biasBits;   // TinyEngine / TFLite (the int32 bias's bits)
        // bias, scale and a per-channel comp repeated over lcm(O, 64) values (RequantArgs), 64-byte aligned.
        std::shared_ptr<Buffer> biasRep, scaleRep, compRep;
        std::size_t period = 0;
        // A depthwise conv with its expansion fused (`own` runs both, fuseExpansions): the slot
        // of the expansion's input, which it reads instead of its own input; −1 if none.
        int expandsFrom = -1;
        std::string where;             // for oneDNN's refusal, when its primitive is built (makePrimitive)
    };
    struct Op {
        const Int8Step* step = nullptr;
        int conv = -1;                 // index into convs (a conv fused with its truncation)
        int out = -1;                  // the slot written (for a conv: its truncation's output)
        std::vector<int> in;           // the slots read: the step's inputs, or a fused expansion's
    };
    std::vector<Conv> convs;
    std::vector<Op> ops;
    int input = -1, logits = -1, classes = 0;

    template <typename T>
    T* at(int slot) const
    {
        return reinterpret_cast<T*>(buffers[static_cast<std::size_t>(bufferOf.at(slot))]->data);
    }
    void* raw(int slot) const { return buffers[static_cast<std::size_t>(bufferOf.at(slot))]->data; }
    std::size_t bufferFloats() const { return u8 ? (cap + 3) / 4 : cap; }

    Impl(const Int8Forward& forward, bool uint8) : f(forward), u8(uint8) {}

    Dims dimsOf(int slot) const
    {
        const TensorShape& s = f.graph().tensor(slot).shape;
        Dims d;
        d.C = s.size() > 1 ? s[1] : 1;
        d.H = s.size() > 2 ? s[2] : 1;
        d.W = s.size() > 3 ? s[3] : 1;
        return d;
    }

    void build()
    {
        arith = f.arithmetic();
        input = f.inputTensor();
        logits = f.logitsTensor();
        classes = f.classes();
        const std::vector<Int8Step>& steps = f.steps();
        // Readers of every slot, to fuse each conv, add and multiply with its truncation.
        std::map<int, std::vector<std::size_t>> readers;
        for (std::size_t i = 0; i < steps.size(); ++i)
            for (int in : steps[i].in) readers[in].push_back(i);
        std::size_t most = dimsOf(input).per();
        dims[input] = dimsOf(input);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const Int8Step& s = steps[i];
            const std::string where = "op " + std::to_string(i) + " (" + f.graph().tensor(s.out).name + ")";
            most = std::max(most, dimsOf(s.out).per());
            if (s.kind == OpKind::McuTruncate) continue;   // fused into the op it reads
            for (int in : s.in)
                if (!dims.count(in)) throw OneDnnRefused("int8 plan: " + where + " reads a tensor no op before it wrote");
            Op op;
            op.step = &s;
            op.out = s.out;
            op.in = s.in;
            if (s.kind != OpKind::McuConv2d && s.kind != OpKind::McuMean && s.kind != OpKind::McuAdd && s.kind != OpKind::McuMultiply)
                throw OneDnnRefused("int8 plan: no kernel for " + where);
            if (s.kind != OpKind::McuMean) {   // int32 results: clamped by the one truncation that reads them
                const auto& r = readers[s.out];
                if (r.size() != 1 || steps[r[0]].kind != OpKind::McuTruncate || s.out == logits)
                    throw OneDnnRefused("int8 plan: the output of " + where + " is read by something other than one truncation");
                op.out = steps[r[0]].out;
            }
            if (s.kind == OpKind::McuConv2d) {
                op.conv = static_cast<int>(convs.size());
                convs.push_back(makeConv(s, where));
            }
            dims[op.out] = dimsOf(op.out);
            ops.push_back(op);
        }
        for (const Int8Step& s : steps)
            if (s.kind == OpKind::McuTruncate && !dims.count(s.out))
                throw OneDnnRefused("int8 plan: a truncation without its op (" + f.graph().tensor(s.out).name + ")");
        if (!dims.count(logits)) throw OneDnnRefused("int8 plan: the logits are not an op's output");
        if (!u8) {
            // Float shifts: a slot read by convs of one zero point is stored minus it. Every slot
            // holds clamped int8 values (the input, truncations, means of them), so |x − zx| is at
            // most max(127 − zx, zx + 128) and a conv whose Σ|w| keeps that below 2^24 needs no check.
            std::map<int, std::vector<std::int32_t>> zeroPoints;
            for (const Op& op : ops)
                if (op.conv >= 0) zeroPoints[op.step->in[0]].push_back(op.step->zx);
            for (auto& [slot, zs] : zeroPoints)
                if (std::all_of(zs.begin(), zs.end(), [&](std::int32_t z) { return z == zs.front(); })) shift[slot] = zs.front();
        }
        if (fuse && u8 && arith == Int8Arithmetic::Exact && kAvx512 && onednn::DepthwiseConv::int8ExpansionAvailable()) fuseExpansions(readers);
        // oneDNN primitives for the convs that still run (a fused expansion needs none).
        for (const Op& op : ops)
            if (op.conv >= 0 && !convs[static_cast<std::size_t>(op.conv)].own && !convs[static_cast<std::size_t>(op.conv)].stem)
                makePrimitive(convs[static_cast<std::size_t>(op.conv)], *op.step);
        for (const Op& op : ops) {
            if (op.conv < 0) continue;
            const Int8Step& s = *op.step;
            Conv& c = convs[static_cast<std::size_t>(op.conv)];
            const double bound = std::max(127 - s.zx, s.zx + 128);
            c.direct = !u8 && shiftOf(s.in[0]) == s.zx && bound * c.sumAbsW < kFloatExact;
            if (u8 && c.expandsFrom < 0 && shiftOf(s.in[0]) != s.zx) {
                c.compPerPosition = !c.stem && (s.pt || s.pl || s.pb || s.pr);
                c.comp = compensation(s, c.compPerPosition, shiftOf(s.in[0]) - s.zx, c.stem != nullptr);
            }
            if ((kAvx512 || kAvx2) && arith == Int8Arithmetic::Exact) repeatChannelValues(s, c);
            // The exact arithmetic: our stem kernel requantises as it stores (no int32 map).
            if (c.stem && arith == Int8Arithmetic::Exact) c.stem->setRequant(c.comp.empty() ? nullptr : c.comp.data(), c.bias.data(), s.scale.data(), s.zy);
        }
        for (const Op& op : ops)
            if (op.step->kind == OpKind::McuAdd || op.step->kind == OpKind::McuMultiply)
                gateTerms.resize(std::max(gateTerms.size(), gateTermsPeriod(static_cast<std::size_t>(dims.at(op.out).C))));
        cap = most * static_cast<std::size_t>(n);
        if (!u8) shifted = std::make_unique<Buffer>(cap);
        acc = std::make_unique<Buffer>(cap);   // float32 or int32 sums
        std::size_t scratchBytes = 0;
        for (const Conv& c : convs)
            scratchBytes = std::max(scratchBytes, c.own    ? c.own->scratchFloats() * sizeof(float)
                                                  : c.stem ? c.stem->scratchBytes()
                                                  : c.prim ? c.scratchpad.get_desc().get_size()
                                                           : 0);
        scratch = std::make_unique<Buffer>((scratchBytes + sizeof(float) - 1) / sizeof(float));
        for (Conv& c : convs) {
            if (!c.prim) continue;
            c.src = memory(c.src.get_desc(), eng, nullptr);
            c.dst = memory(c.dst.get_desc(), eng, acc->data);
            c.scratchpad = memory(c.scratchpad.get_desc(), eng, scratch->data);
            c.args = {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, c.dst}, {DNNL_ARG_SCRATCHPAD, c.scratchpad}};
        }
        assignBuffers();
    }

    // Each depthwise conv our kernel sums whose input is a 1×1 conv's (one group, stride 1, no
    // padding) read by nothing else: the two run as one (DepthwiseConv::runExpanded on uint8), the
    // expansion's requantised output computed into the depthwise kernel's tiles as y − zdw and never
    // stored, so the depthwise sums need no compensation either. Uint8 storage and the exact
    // arithmetic only (docs/ONEDNN.md, "The int8 expansion fused").
    void fuseExpansions(const std::map<int, std::vector<std::size_t>>& readers)
    {
        std::map<int, std::size_t> writer;   // slot -> the op writing it
        for (std::size_t i = 0; i < ops.size(); ++i) writer[ops[i].out] = i;
        std::vector<bool> fused(ops.size(), false);
        for (Op& d : ops) {
            if (d.conv < 0 || !convs[static_cast<std::size_t>(d.conv)].own) continue;
            const Int8Step& s = *d.step;
            const int mid = s.in[0];
            const auto w = writer.find(mid);
            if (w == writer.end() || ops[w->second].conv < 0 || mid == logits || readers.at(mid).size() != 1) continue;
            const Int8Step& e = *ops[w->second].step;
            if (e.KH != 1 || e.KW != 1 || e.groups != 1 || e.sh != 1 || e.sw != 1 || e.pt || e.pl || e.pb || e.pr || e.O != s.C || e.HO != s.H ||
                e.WO != s.W)
                continue;
            const std::vector<std::int32_t> comp = compensation(e, false, shiftOf(e.in[0]) - e.zx);
            const Conv& ec = convs[static_cast<std::size_t>(ops[w->second].conv)];
            const onednn::Int8Expansion x{e.C, e.weight.data(), comp.data(), ec.bias.data(), e.scale.data(), e.zy, s.zx};
            if (!onednn::DepthwiseConv::int8ExpansionFitsInt32(s.C, x)) continue;
            const std::vector<float> wf(s.weight.begin(), s.weight.end());
            Conv& c = convs[static_cast<std::size_t>(d.conv)];
            try {
                c.own = std::make_shared<onednn::DepthwiseConv>(s.C, s.H, s.KH, s.sh, s.pt, wf.data(), x);
            } catch (const std::invalid_argument&) {   // an expansion weight outside int8: its own conv refuses it
                continue;
            }
            c.expandsFrom = e.in[0];
            d.in = e.in;
            fused[w->second] = true;
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < ops.size(); ++i)
            if (!fused[i]) ops[kept++] = ops[i];
        ops.resize(kept);
    }

    // The AVX-512 / AVX2 exact requantisation's per-channel values over lcm(O, 64) (RequantArgs).
    static void repeatChannelValues(const Int8Step& s, Conv& c)
    {
        const std::size_t O = static_cast<std::size_t>(s.O);
        c.period = O * 64 / std::gcd(O, std::size_t{64});
        c.biasRep = std::make_shared<Buffer>(c.period);
        c.scaleRep = std::make_shared<Buffer>(c.period);
        if (!c.comp.empty() && !c.compPerPosition) c.compRep = std::make_shared<Buffer>(c.period);
        for (std::size_t i = 0; i < c.period; ++i) {
            c.biasRep->data[i] = c.bias[i % O];
            c.scaleRep->data[i] = s.scale[i % O];
            if (c.compRep) reinterpret_cast<std::int32_t*>(c.compRep->data)[i] = c.comp[i % O];
        }
    }

    // `factor` · Σ w over the taps of output (oy, ox) that meet the image, for every output channel;
    // without padding every tap meets it everywhere, so position (0, 0) alone. `everyTap`: Σ w over
    // all taps, one per channel (our stem kernel's input is bordered, so every tap meets a value).
    static std::vector<std::int32_t> compensation(const Int8Step& s, bool perPosition, std::int32_t factor, bool everyTap = false)
    {
        if (everyTap) {
            const std::size_t per = static_cast<std::size_t>(s.C / s.groups) * s.KH * s.KW;
            std::vector<std::int32_t> comp(static_cast<std::size_t>(s.O), 0);
            for (std::size_t o = 0; o < comp.size(); ++o)
                comp[o] = factor * std::accumulate(s.weight.begin() + static_cast<std::ptrdiff_t>(o * per),
                                                   s.weight.begin() + static_cast<std::ptrdiff_t>((o + 1) * per), std::int32_t{0});
            return comp;
        }
        const int HO = perPosition ? s.HO : 1, WO = perPosition ? s.WO : 1;
        const int Cg = s.C / s.groups, K = s.KH * s.KW;
        std::vector<std::int32_t> tapSum(static_cast<std::size_t>(s.O) * K, 0);   // Σ over the group's channels, per tap
        for (int o = 0; o < s.O; ++o)
            for (int c = 0; c < Cg; ++c)
                for (int k = 0; k < K; ++k)
                    tapSum[static_cast<std::size_t>(o) * K + k] += s.weight[(static_cast<std::size_t>(o) * Cg + c) * K + k];
        std::vector<std::int32_t> comp(static_cast<std::size_t>(HO) * WO * s.O, 0);
        for (int oy = 0; oy < HO; ++oy)
            for (int ox = 0; ox < WO; ++ox)
                for (int ky = 0; ky < s.KH; ++ky) {
                    const int iy = oy * s.sh - s.pt + ky;
                    if (iy < 0 || iy >= s.H) continue;
                    for (int kx = 0; kx < s.KW; ++kx) {
                        const int ix = ox * s.sw - s.pl + kx;
                        if (ix < 0 || ix >= s.W) continue;
                        std::int32_t* row = &comp[(static_cast<std::size_t>(oy) * WO + ox) * s.O];
                        for (int o = 0; o < s.O; ++o) row[o] += tapSum[static_cast<std::size_t>(o) * K + ky * s.KW + kx];
                    }
                }
        for (std::int32_t& v : comp) v *= factor;
        return comp;
    }

    // Buffers by liveness: an op's output takes a free buffer; an input is freed after its last reader.
    void assignBuffers()
    {
        std::map<int, std::size_t> last;
        for (std::size_t i = 0; i < ops.size(); ++i)
            for (int in : ops[i].in) last[in] = i;
        std::vector<int> free;
        auto take = [&](int slot) {
            if (free.empty() || keep) {
                buffers.push_back(std::make_unique<Buffer>(bufferFloats()));
                bufferOf[slot] = static_cast<int>(buffers.size()) - 1;
            } else {
                bufferOf[slot] = free.back();
                free.pop_back();
            }
        };
        take(input);
        for (std::size_t i = 0; i < ops.size(); ++i) {
            take(ops[i].out);
            for (int in : ops[i].in)
                if (last[in] == i && in != logits) free.push_back(bufferOf.at(in));
        }
    }

    Conv makeConv(const Int8Step& s, const std::string& where)
    {
        Conv c;
        const int Cg = s.C / s.groups, per = Cg * s.KH * s.KW;
        c.sumAbsW = onednn::largestChannelAbsSum(s.weight, s.O, per);
        for (std::int32_t b : s.bias) {
            c.bias.push_back(static_cast<float>(b));
            c.biasBits.push_back(static_cast<std::uint32_t>(b));
        }
        // Depthwise with square, symmetric padding: our kernel (uint8 → int32 or float → float
        // sums). Its float32 partial sums are integers below 255 · Σ|w| (uint8) or the plan's own
        // 2^24 check (float), so exact like oneDNN's.
        const bool depthwise = s.groups == s.C && s.C == s.O && s.KH == s.KW && s.sh == s.sw && s.H == s.W && s.HO == s.WO &&
                               s.pt == s.pl && s.pt == s.pb && s.pt == s.pr;
        if (depthwise && onednn::DepthwiseConv::available() && onednn::DepthwiseConv::supports(s.KH, s.sh) &&
            (!u8 || 255.0 * c.sumAbsW < kFloatExact)) {
            const std::vector<float> wf(s.weight.begin(), s.weight.end());
            auto dw = std::make_shared<onednn::DepthwiseConv>(s.C, s.H, s.KH, s.sh, s.pt, wf.data(), nullptr, false);
            if (dw->outputSize() == s.HO) {
                c.own = std::move(dw);
                return c;
            }
        }
        // A conv of a few input channels (the stem), uint8 storage: our VNNI kernel, its input
        // bordered with the zero point's stored value (zx + 128).
        if (u8 && s.groups == 1 && s.KH == s.KW && s.sh == s.sw && s.H == s.W && s.HO == s.WO && s.pt == s.pl && s.pt == s.pb && s.pt == s.pr &&
            s.zx >= -128 && s.zx <= 127 && onednn::Int8StemConv::available() && onednn::Int8StemConv::supports(s.C, s.O, s.KH, s.sh)) {
            try {
                auto stem = std::make_shared<onednn::Int8StemConv>(s.C, s.O, s.H, s.KH, s.sh, s.pt, s.weight.data(), static_cast<std::uint8_t>(s.zx + 128));
                if (stem->outputSize() == s.HO) {
                    c.stem = std::move(stem);
                    return c;
                }
            } catch (const std::invalid_argument&) {   // a weight outside int8: oneDNN's conv refuses it by name
            }
        }
        c.where = where;
        return c;
    }

    // The oneDNN convolution of a conv our kernels do not run, its weights reordered once.
    void makePrimitive(Conv& c, const Int8Step& s)
    {
        const std::string& where = c.where;
        const int Cg = s.C / s.groups;
        // A square conv (padding k/2) on a map so small that its outer taps meet only the padding
        // (7×7 depthwise convs on 1×1–3×3 maps): the kernel cropped to the taps that meet data, as
        // the fp32 plan crops it (oneDnnWindow) — the same sums, and no compensation changes (it
        // counts taps that meet the image) — where oneDNN would otherwise run the full kernel
        // through its slow im2col GEMM path (x64:gemm:jit, 5.7 ms for a 2×2 map of 1,152 channels
        // and 8 images under AVX2).
        const bool square = s.KH == s.KW && s.sh == s.sw && s.H == s.W && s.pt == s.KH / 2 && s.pl == s.pt && s.pb == s.pt && s.pr == s.pt;
        const KernelWindow win = square ? onednn::oneDnnWindow(s.KH, s.sh, s.H) : KernelWindow{s.KH, 0, s.pt};
        const bool crop = square && win.cropped(s.KH);
        const int KH = crop ? win.size : s.KH, KW = crop ? win.size : s.KW;
        const int pt = crop ? win.pad : s.pt, pl = crop ? win.pad : s.pl, pb = crop ? win.pad : s.pb, pr = crop ? win.pad : s.pr;
        const std::vector<std::int32_t> weights =
            crop ? onednn::croppedKernel(s.weight.data(), static_cast<std::size_t>(s.O) * Cg, s.KH, win) : std::vector<std::int32_t>{};
        const std::vector<std::int32_t>& weight = crop ? weights : s.weight;
        try {
            const Dt act = u8 ? Dt::u8 : Dt::f32, wt = u8 ? Dt::s8 : Dt::f32, sums = u8 ? Dt::s32 : Dt::f32;
            std::vector<float> wf;
            std::vector<std::int8_t> w8;
            if (u8) {
                for (std::int32_t w : weight) {
                    if (w < -128 || w > 127) throw OneDnnRefused("int8 plan: " + where + " has a weight outside int8: " + std::to_string(w));
                    w8.push_back(static_cast<std::int8_t>(w));
                }
            } else {
                wf.assign(weight.begin(), weight.end());
            }
            const memory::dims wdims = s.groups == 1 ? memory::dims{s.O, s.C, KH, KW} : memory::dims{s.groups, s.O / s.groups, Cg, KH, KW};
            const memory::desc wUser(wdims, wt, s.groups == 1 ? Tag::oihw : Tag::goihw), wAny(wdims, wt, Tag::any);
            // One matrix product over the batch's pixels where it is one (OneDnnCommon.h).
            const bool flat = onednn::batchAsPixels(KH, KW, pt, pl, pb, pr, s.sh, s.sw, s.H, s.W);
            const memory::dims srcDims = flat ? memory::dims{1, s.C, n * s.H * s.W, 1} : memory::dims{n, s.C, s.H, s.W};
            const memory::dims dstDims = flat ? memory::dims{1, s.O, n * s.HO * s.WO, 1} : memory::dims{n, s.O, s.HO, s.WO};
            const memory::desc src(srcDims, act, Tag::nhwc), dst(dstDims, sums, Tag::nhwc);
            dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wAny, dst,
                                              flat ? memory::dims{1, 1} : memory::dims{s.sh, s.sw}, {pt, pl}, {pb, pr});
            dnnl::primitive_attr attr;
            attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
            dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
            memory user(wUser, eng, u8 ? static_cast<void*>(w8.data()) : static_cast<void*>(wf.data()));
            c.weights = memory(pd.weights_desc(), eng);
            dnnl::reorder(user, c.weights).execute(stream, user, c.weights);
            stream.wait();
            c.src = memory(src, eng, nullptr);
            c.dst = memory(dst, eng, nullptr);
            c.scratchpad = memory(pd.scratchpad_desc(), eng, nullptr);
            c.prim.emplace(pd);
        } catch (const dnnl::error& e) {
            throw OneDnnRefused("int8 plan: oneDNN refused " + where + " (batch " + std::to_string(n) + "): " + e.what());
        }
    }

    template <typename T>
    void quantizeInput(const float* images)
    {
        const Dims d = dims.at(input);
        const std::size_t hw = static_cast<std::size_t>(d.H) * d.W;
        const float inv = static_cast<float>(1.0 / f.inputScale());
        const std::int32_t zero = f.inputZero(), sh = shiftOf(input);
        T* out = at<T>(input);
        if (kAvx512 && d.C <= 4) {
            quantizeInputAvx512(images, n, d.C, hw, inv, zero, sh, out);
            return;
        }
        if (kAvx2 && d.C <= 4) {
            quantizeInputAvx2(images, n, d.C, hw, inv, zero, sh, out);
            return;
        }
        for (int b = 0; b < n; ++b)
            for (int c = 0; c < d.C; ++c) {
                const float* src = images + (static_cast<std::size_t>(b) * d.C + c) * hw;
                T* dst = out + static_cast<std::size_t>(b) * hw * d.C + c;
                for (std::size_t p = 0; p < hw; ++p) dst[p * d.C] = static_cast<T>(int8k::quantizeInput(src[p], inv, zero) - sh);
            }
    }

    bool conv(const Op& op)
    {
        const Int8Step& s = *op.step;
        Conv& c = convs[static_cast<std::size_t>(op.conv)];
        if (c.expandsFrom >= 0) {
            c.own->runExpanded(at<std::uint8_t>(c.expandsFrom), reinterpret_cast<std::int32_t*>(acc->data), n, scratch->data);
            return requantize(op, c);
        }
        void* src = raw(s.in[0]);
        if (!u8 && !(c.direct && !checkAll)) {   // another shift, or sums that might leave float32's exact range: shift a copy and check
            const std::size_t inCount = dims.at(s.in[0]).per() * n;
            const float most = shiftAndMax(at<float>(s.in[0]), inCount, static_cast<float>(s.zx - shiftOf(s.in[0])), shifted->data);
            if (static_cast<double>(most) * c.sumAbsW >= kFloatExact) return false;   // a partial sum might not be exact
            src = shifted->data;
        }
        if (c.stem) {
            auto* tile = reinterpret_cast<std::uint8_t*>(scratch->data);
            if (arith == Int8Arithmetic::Exact) {   // requantised as it stores (setRequant)
                c.stem->run(static_cast<const std::uint8_t*>(src), at<std::uint8_t>(op.out), n, tile);
                return true;
            }
            c.stem->run(static_cast<const std::uint8_t*>(src), reinterpret_cast<std::int32_t*>(acc->data), n, tile);
        } else if (c.own) {
            if (u8) c.own->run(static_cast<const std::uint8_t*>(src), reinterpret_cast<std::int32_t*>(acc->data), n, scratch->data);
            else c.own->run(static_cast<const float*>(src), acc->data, n, scratch->data);
        } else {
            c.src.set_data_handle(src);
            c.prim->execute(stream, c.args);
            stream.wait();
        }
        return requantize(op, c);
    }

    // The conv's sums (in acc) requantised, clamped and stored in its truncation's slot.
    bool requantize(const Op& op, const Conv& c)
    {
        const Int8Step& s = *op.step;
        RequantArgs r{c.comp.empty() ? nullptr : c.comp.data(),
                      c.compPerPosition ? static_cast<std::size_t>(s.O) : 0,
                      static_cast<std::size_t>(n),
                      static_cast<std::size_t>(s.HO) * s.WO,
                      s.O,
                      c.bias.data(),
                      c.biasBits.data(),
                      s.scale.data(),
                      s.mult.data(),
                      s.zy,
                      shiftOf(op.out)};
        if (c.period) {
            r.biasRep = c.biasRep->data;
            r.scaleRep = c.scaleRep->data;
            r.compRep = c.compRep ? reinterpret_cast<const std::int32_t*>(c.compRep->data) : nullptr;
            r.period = c.period;
        }
        if (u8) {
            const auto* a = reinterpret_cast<const std::int32_t*>(acc->data);
            auto* out = at<std::uint8_t>(op.out);
            if (arith == Int8Arithmetic::Tflite) requantTflite(a, r, out);
            else if (arith == Int8Arithmetic::TinyEngine) requantTinyEngineU(a, r, out);
            else if (r.period && kAvx512) requantExactAvx512(a, r, out);
            else if (r.period) requantExactAvx2(a, r, out);
            else requantExactU(a, r, out);
        } else {
            float* out = at<float>(op.out);
            if (arith == Int8Arithmetic::Tflite) requantTflite(acc->data, r, out);
            else if (arith == Int8Arithmetic::TinyEngine) requantTinyEngineF(acc->data, r, out);
            else if (r.period && kAvx512) requantExactAvx512(acc->data, r, out);
            else if (r.period) requantExactAvx2(acc->data, r, out);
            else requantExactF(acc->data, r, out);
        }
        return true;
    }

    template <typename T>
    void mean(const Op& op)
    {
        const Int8Step& s = *op.step;
        const Dims d = dims.at(s.in[0]);
        const int hw = d.H * d.W;
        const T* x = at<T>(s.in[0]);
        T* out = at<T>(op.out);
        const bool rounded = arith != Int8Arithmetic::Exact;
        const std::int32_t shiftIn = shiftOf(s.in[0]), shiftOut = shiftOf(op.out);
        // Integer sums (the stored values plus hw shifts): exact in double in any order, and in
        // int32 as Int8Forward sums them. Stored uint8 values are summed in int32 (below 255 · hw,
        // converted to double exactly: the same value, on vectors), float ones in double.
        if constexpr (std::is_same_v<T, std::uint8_t>) {
            if (kAvx512 && !rounded) {
                for (int b = 0; b < n; ++b)
                    meanExactUint8Avx512(x + static_cast<std::size_t>(b) * hw * d.C, static_cast<std::size_t>(hw), static_cast<std::size_t>(d.C),
                                         shiftIn, shiftOut, out + static_cast<std::size_t>(b) * d.C);
                return;
            }
        }
        using Sum = std::conditional_t<std::is_same_v<T, std::uint8_t>, std::int32_t, double>;
        std::vector<Sum> sums(static_cast<std::size_t>(d.C));
        for (int b = 0; b < n; ++b) {
            std::fill(sums.begin(), sums.end(), Sum(0));
            const T* xb = x + static_cast<std::size_t>(b) * hw * d.C;
            Sum* __restrict acc = sums.data();
            for (int p = 0; p < hw; ++p) {
                const T* __restrict row = xb + static_cast<std::size_t>(p) * d.C;
                for (int c = 0; c < d.C; ++c) acc[c] += static_cast<Sum>(row[c]);
            }
            for (int c = 0; c < d.C; ++c) {
                const double sum = static_cast<double>(sums[static_cast<std::size_t>(c)]) + static_cast<double>(hw) * shiftIn;
                out[static_cast<std::size_t>(b) * d.C + c] = static_cast<T>(
                    (rounded ? int8k::meanRounded(static_cast<std::int32_t>(sum), hw) : int8k::meanExact(sum, hw)) - shiftOut);
            }
        }
    }

    // Add or multiply, and the truncation that reads it.
    template <typename T>
    void addMul(const Op& op)
    {
        const Int8Step& s = *op.step;
        const bool mul = s.kind == OpKind::McuMultiply;
        const Dims d = dims.at(op.out);
        const std::size_t per = d.per(), hw = static_cast<std::size_t>(d.H) * d.W, C = static_cast<std::size_t>(d.C);
        // Operands are the output's shape or a per-channel gate broadcast over H, W.
        const bool aGate = shapeElems(s.shape1) != s.n, bGate = shapeElems(s.shape2) != s.n;
        const T *a = at<T>(s.in[0]), *b = at<T>(s.in[1]);
        T* out = at<T>(op.out);
        const bool tflite = arith == Int8Arithmetic::Tflite, tinyEngine = arith == Int8Arithmetic::TinyEngine;
        const std::int32_t shifts[3] = {shiftOf(s.in[0]), shiftOf(s.in[1]), shiftOf(op.out)};
        if ((kAvx512 || kAvx2) && arith == Int8Arithmetic::Exact && !(aGate && bGate)) {
            const AddMulArgs g{mul, s.z1, s.z2, s.s1, s.s2, s.sy, s.fzy, shifts[0], shifts[1], shifts[2]};
            if (!aGate && !bGate) {
                if (kAvx512) addMulExactAvx512(a, b, static_cast<std::size_t>(n) * per, g, out);
                else addMulExactAvx2(a, b, static_cast<std::size_t>(n) * per, g, out);
                return;
            }
            // A gate (one value per channel, broadcast over the map); a gate first is swapped with
            // its zero point and scale (float + and × commute bit for bit).
            const AddMulArgs swapped{mul, s.z2, s.z1, s.s2, s.s1, s.sy, s.fzy, shifts[1], shifts[0], shifts[2]};
            for (int im = 0; im < n; ++im) {
                const std::size_t map = static_cast<std::size_t>(im) * per, gate = static_cast<std::size_t>(im) * C;
                const T *m = bGate ? a + map : b + map, *gt = bGate ? b + gate : a + gate;
                if (kAvx512) gateExactAvx512(m, gt, hw, C, bGate ? g : swapped, gateTerms.data(), out + map);
                else gateExactAvx2(m, gt, hw, C, bGate ? g : swapped, gateTerms.data(), out + map);
            }
            return;
        }
        for (int im = 0; im < n; ++im)
            for (std::size_t p = 0; p < hw; ++p) {
                const std::size_t row = static_cast<std::size_t>(im) * per + p * C, gate = static_cast<std::size_t>(im) * C;
                const T *ra = a + (aGate ? gate : row), *rb = b + (bGate ? gate : row);
                if (tflite) addMulRowTflite(ra, rb, C, mul, s, shifts, out + row);
                else addMulRow(ra, rb, C, mul, tinyEngine, s, shifts, out + row);
            }
    }

    template <typename T>
    bool runAll(const float* images, std::int32_t* logitsOut)
    {
        quantizeInput<T>(images);
        for (const Op& op : ops) {
            if (op.conv >= 0) {
                if (!conv(op)) return false;
            } else if (op.step->kind == OpKind::McuMean) {
                mean<T>(op);
            } else {
                addMul<T>(op);
            }
        }
        const T* l = at<T>(logits);
        const std::size_t count = static_cast<std::size_t>(n) * classes;
        const std::int32_t sh = shiftOf(logits);
        for (std::size_t i = 0; i < count; ++i) logitsOut[i] = static_cast<std::int32_t>(l[i]) + sh;
        return true;
    }

    template <typename T>
    std::vector<std::int32_t> tensor(int id, int image) const
    {
        if (!bufferOf.count(id)) return {};   // a fused expansion's output
        const Dims d = dims.at(id);
        const std::size_t hw = static_cast<std::size_t>(d.H) * d.W;
        const T* x = at<T>(id) + static_cast<std::size_t>(image) * d.per();
        std::vector<std::int32_t> out(d.per());
        const std::int32_t sh = shiftOf(id);
        for (int c = 0; c < d.C; ++c)
            for (std::size_t q = 0; q < hw; ++q) out[static_cast<std::size_t>(c) * hw + q] = static_cast<std::int32_t>(x[q * d.C + c]) + sh;
        return out;
    }
};

OneDnnInt8Plan::OneDnnInt8Plan(const Int8Forward& forward, int batch, OneDnnInt8Storage storage, OneDnnInt8Expansion expansion)
    : impl_(std::make_unique<Impl>(forward, storage == OneDnnInt8Storage::Uint8 || (storage == OneDnnInt8Storage::Auto && oneDnnHasVnni())))
{
    if (batch < 1) throw OneDnnRefused("int8 plan: batch size must be at least 1, got " + std::to_string(batch));
    impl_->n = batch;
    impl_->fuse = expansion == OneDnnInt8Expansion::FusedIntoDepthwise;
    const onednn::OneThreadScope oneThread;   // single-threaded primitives (OneDnnCommon.h)
    impl_->build();
}

OneDnnInt8Plan::~OneDnnInt8Plan() = default;

int OneDnnInt8Plan::batch() const { return impl_->n; }
bool OneDnnInt8Plan::uint8Storage() const { return impl_->u8; }

std::size_t OneDnnInt8Plan::ownDepthwise() const
{
    return static_cast<std::size_t>(std::count_if(impl_->convs.begin(), impl_->convs.end(), [](const Impl::Conv& c) { return c.own != nullptr; }));
}

std::size_t OneDnnInt8Plan::ownStems() const
{
    return static_cast<std::size_t>(std::count_if(impl_->convs.begin(), impl_->convs.end(), [](const Impl::Conv& c) { return c.stem != nullptr; }));
}

std::size_t OneDnnInt8Plan::fusedExpansions() const
{
    return static_cast<std::size_t>(std::count_if(impl_->convs.begin(), impl_->convs.end(), [](const Impl::Conv& c) { return c.expandsFrom >= 0; }));
}

void OneDnnInt8Plan::keepAll(bool keep)
{
    Impl& p = *impl_;
    if (keep == p.keep) return;
    p.keep = keep;
    p.buffers.clear();
    p.bufferOf.clear();
    p.assignBuffers();
}

void OneDnnInt8Plan::checkEveryConv(bool check) { impl_->checkAll = check; }

bool OneDnnInt8Plan::run(const float* images, std::int32_t* logits)
{
    Impl& p = *impl_;
    const onednn::OneThreadScope oneThread;
    return p.u8 ? p.runAll<std::uint8_t>(images, logits) : p.runAll<float>(images, logits);
}

std::vector<std::int32_t> OneDnnInt8Plan::tensor(int id, int image) const
{
    const Impl& p = *impl_;
    if (!p.keep || !p.dims.count(id) || image < 0 || image >= p.n) return {};
    return p.u8 ? p.tensor<std::uint8_t>(id, image) : p.tensor<float>(id, image);
}

// ---- the engine ----

namespace {
// Images per plan run: as many as keep the largest activation within kRunValues values (1 MiB in
// uint8 storage, 4 MiB in float), 1 to kPlanBatch. Measured on machine A (2026-12-03, docs/ONEDNN.md
// "int8 runs"): the largest VWW subnet at 160 px (614 Ki values per image) ran 1.17× faster one
// image at a time than in runs of 8 (787 against 672 img/s, two threads); at 96 px (221 Ki) 2–8
// images were within 3 %; the smallest subnet within 5 % from 2 to 8.
constexpr int kPlanBatch = 8;
constexpr std::int64_t kRunValues = std::int64_t{1} << 20;

int runBatchOf(const Int8Forward& f)
{
    std::int64_t most = 1;
    for (const Tensor& t : f.graph().tensors)
        if (t.kind == TensorKind::Activation) most = std::max(most, t.elems());
    return static_cast<int>(std::clamp<std::int64_t>(kRunValues / most, 1, kPlanBatch));
}
using onednn::partSize;
int argmax(const std::int32_t* l, int n) { return static_cast<int>(std::max_element(l, l + n) - l); }
}  // namespace

OneDnnInt8Engine::OneDnnInt8Engine(const Int8Forward& forward, OneDnnInt8Storage storage, OneDnnInt8Expansion expansion)
    : forward_(forward), storage_(storage), expansion_(expansion), runBatch_(runBatchOf(forward))
{
    if (storage_ == OneDnnInt8Storage::Auto && !oneDnnHasVnni()) storage_ = OneDnnInt8Storage::Float;
}
OneDnnInt8Engine::~OneDnnInt8Engine() = default;

OneDnnInt8Plan& OneDnnInt8Engine::plan(int batch, int part)
{
    const auto key = std::make_pair(batch, part);
    auto it = plans_.find(key);
    if (it == plans_.end()) it = plans_.emplace(key, std::make_unique<OneDnnInt8Plan>(forward_, batch, storage_, expansion_)).first;
    return *it->second;
}

void OneDnnInt8Engine::chooseStorage(const float* images, int n)
{
    // One plan of each storage on the first (up to runBatch_) images: each run once to warm up, then both
    // timed in turns, three rounds, each storage's best kept (one timed run each was not enough:
    // on a subnet where the two are within 20 % the choice flipped between runs).
    using Clock = std::chrono::steady_clock;
    const int m = std::min(runBatch_, n);
    std::vector<std::int32_t> logits(static_cast<std::size_t>(m) * forward_.classes());
    std::unique_ptr<OneDnnInt8Plan> plans[2];
    const OneDnnInt8Storage kinds[2] = {OneDnnInt8Storage::Float, OneDnnInt8Storage::Uint8};
    double best[2] = {1e300, 1e300};
    std::string refusal;
    for (int i = 0; i < 2; ++i) {
        try {   // a storage oneDNN refuses (e.g. a weight outside int8 for uint8) leaves the other
            plans[i] = std::make_unique<OneDnnInt8Plan>(forward_, m, kinds[i], expansion_);
            plans[i]->run(images, logits.data());
        } catch (const OneDnnRefused& e) {
            refusal = e.what();
        }
    }
    for (int round = 0; round < 3; ++round)
        for (int i = 0; i < 2; ++i) {
            if (!plans[i]) continue;
            const auto t0 = Clock::now();
            plans[i]->run(images, logits.data());
            best[i] = std::min(best[i], std::chrono::duration<double>(Clock::now() - t0).count());
        }
    if (!plans[0] && !plans[1]) throw OneDnnRefused(refusal);
    const int pick = !plans[0] ? 1 : !plans[1] ? 0 : best[1] < best[0] ? 1 : 0;
    storage_ = kinds[pick];
    plans_[{m, 0}] = std::move(plans[pick]);   // the winner serves part 0
}

void OneDnnInt8Engine::prepareFor(int n, int parts)
{
    for (int p = 0; p < parts; ++p) {
        const int size = partSize(n, parts, p);
        plan(std::min(runBatch_, size), p);
        if (size > runBatch_ && size % runBatch_) plan(size % runBatch_, p);
    }
}

void OneDnnInt8Engine::predict(const float* images, int n, int threads, int* classes)
{
    if (n <= 0) return;
    const TensorShape& in = forward_.graph().tensor(forward_.inputTensor()).shape;
    const std::size_t imageFloats = static_cast<std::size_t>(shapeElems(in));
    const int parts = std::max(1, std::min(threads, n));
    if (refused_.empty()) {
        try {
            if (storage_ == OneDnnInt8Storage::Auto) chooseStorage(images, n);
            prepareFor(n, parts);
        } catch (const OneDnnRefused& e) {
            refused_ = e.what();
        }
    }
    if (!refused_.empty()) {
        for (int i = 0; i < n; ++i) classes[i] = forward_.predict(images + static_cast<std::size_t>(i) * imageFloats);
        onLoops_ += static_cast<std::size_t>(n);
        return;
    }
    const int k = forward_.classes();
    std::vector<int> first(static_cast<std::size_t>(parts) + 1, 0);
    for (int p = 0; p < parts; ++p) first[p + 1] = first[p] + partSize(n, parts, p);
    std::vector<std::size_t> loops(static_cast<std::size_t>(parts), 0);
    auto part = [&](int p) {
        std::vector<std::int32_t> logits(static_cast<std::size_t>(runBatch_) * k);
        for (int at = first[p]; at < first[p + 1];) {
            const int m = std::min(runBatch_, first[p + 1] - at);
            const float* x = images + static_cast<std::size_t>(at) * imageFloats;
            if (plan(m, p).run(x, logits.data())) {
                for (int i = 0; i < m; ++i) classes[at + i] = argmax(&logits[static_cast<std::size_t>(i) * k], k);
            } else {   // outside float32's exact range: Int8Forward, image by image
                for (int i = 0; i < m; ++i) classes[at + i] = forward_.predict(x + static_cast<std::size_t>(i) * imageFloats);
                loops[static_cast<std::size_t>(p)] += static_cast<std::size_t>(m);
            }
            at += m;
        }
    };
    if (parts == 1) {
        part(0);
    } else {
        if (!pool_ || pool_->threads() != parts) pool_ = std::make_unique<ShardPool>(parts);
        pool_->run(parts, part);
    }
    for (std::size_t l : loops) onLoops_ += l;
}

Int8Top1 evaluateInt8OnOneDnn(const Int8Forward& f, const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                              const Normalization& norm, int threads, const JobControl& job, std::string* note)
{
    OneDnnInt8Engine engine(f);
    threads = std::max(1, threads);
    const Int8Top1 r = evaluateInt8Batches(data, items, resolution, norm, threads, job, [&](const float* pixels, std::size_t n, int* classes) {
        engine.predict(pixels, static_cast<int>(n), threads, classes);
    });
    if (note) {
        if (!engine.refused().empty()) *note = engine.refused() + "; Int8Forward ran every image";
        else if (engine.imagesOnLoops()) *note = std::to_string(engine.imagesOnLoops()) + " images ran on Int8Forward (float32's exact range)";
    }
    return r;
}

}  // namespace tinyscope
