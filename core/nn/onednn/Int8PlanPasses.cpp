#include "nn/onednn/Int8PlanPasses.h"

#include "nn/onednn/Avx512.h"
#include "tinyengine/Int8Kernels.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace tinyscope::int8pass {

namespace {


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

TS_CLONES float shiftAndMaxLoop(const float* x, std::size_t count, float d, float* out)
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

// RequantArgs' loop with the requantisation `requant` (Int8PlanPasses.h).
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
    const std::size_t period = repeatPeriod(C);
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
    const std::size_t period = repeatPeriod(C);
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

// The mean pass: AVX-512 for uint8 slots in the exact arithmetic, else the loops below.
template <typename T>
void meanOf(const T* x, int n, int hw, int C, std::int32_t shiftIn, std::int32_t shiftOut, bool rounded, T* out)
{
    // Integer sums (the stored values plus hw shifts): exact in double in any order, and in
    // int32 as Int8Forward sums them. Stored uint8 values are summed in int32 (below 255 · hw,
    // converted to double exactly: the same value, on vectors), float ones in double.
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        if (kAvx512 && !rounded) {
            for (int b = 0; b < n; ++b)
                meanExactUint8Avx512(x + static_cast<std::size_t>(b) * hw * C, static_cast<std::size_t>(hw), static_cast<std::size_t>(C), shiftIn,
                                     shiftOut, out + static_cast<std::size_t>(b) * C);
            return;
        }
    }
    using Sum = std::conditional_t<std::is_same_v<T, std::uint8_t>, std::int32_t, double>;
    std::vector<Sum> sums(static_cast<std::size_t>(C));
    for (int b = 0; b < n; ++b) {
        std::fill(sums.begin(), sums.end(), Sum(0));
        const T* xb = x + static_cast<std::size_t>(b) * hw * C;
        Sum* __restrict acc = sums.data();
        for (int p = 0; p < hw; ++p) {
            const T* __restrict row = xb + static_cast<std::size_t>(p) * C;
            for (int c = 0; c < C; ++c) acc[c] += static_cast<Sum>(row[c]);
        }
        for (int c = 0; c < C; ++c) {
            const double sum = static_cast<double>(sums[static_cast<std::size_t>(c)]) + static_cast<double>(hw) * shiftIn;
            out[static_cast<std::size_t>(b) * C + c] =
                static_cast<T>((rounded ? int8k::meanRounded(static_cast<std::int32_t>(sum), hw) : int8k::meanExact(sum, hw)) - shiftOut);
        }
    }
}

template <typename T>
void quantizeInputOf(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, T* out)
{
    if (kAvx512 && C <= 4) {
        quantizeInputAvx512(images, n, C, hw, inv, zero, shift, out);
        return;
    }
    if (kAvx2 && C <= 4) {
        quantizeInputAvx2(images, n, C, hw, inv, zero, shift, out);
        return;
    }
    for (int b = 0; b < n; ++b)
        for (int c = 0; c < C; ++c) {
            const float* src = images + (static_cast<std::size_t>(b) * C + c) * hw;
            T* dst = out + static_cast<std::size_t>(b) * hw * C + c;
            for (std::size_t p = 0; p < hw; ++p) dst[p * C] = static_cast<T>(int8k::quantizeInput(src[p], inv, zero) - shift);
        }
}

template <typename T>
void addMulOf(const T* a, const T* b, bool aGate, bool bGate, int n, std::size_t hw, std::size_t C, Int8Arithmetic arith, const Int8Step& s,
              const std::int32_t shifts[3], float* gateTerms, T* out)
{
    const bool mul = s.kind == OpKind::McuMultiply;
    const std::size_t per = hw * C;
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
            if (kAvx512) gateExactAvx512(m, gt, hw, C, bGate ? g : swapped, gateTerms, out + map);
            else gateExactAvx2(m, gt, hw, C, bGate ? g : swapped, gateTerms, out + map);
        }
        return;
    }
    const bool tflite = arith == Int8Arithmetic::Tflite, tinyEngine = arith == Int8Arithmetic::TinyEngine;
    for (int im = 0; im < n; ++im)
        for (std::size_t p = 0; p < hw; ++p) {
            const std::size_t row = static_cast<std::size_t>(im) * per + p * C, gate = static_cast<std::size_t>(im) * C;
            const T *ra = a + (aGate ? gate : row), *rb = b + (bGate ? gate : row);
            if (tflite) addMulRowTflite(ra, rb, C, mul, s, shifts, out + row);
            else addMulRow(ra, rb, C, mul, tinyEngine, s, shifts, out + row);
        }
}

}  // namespace

bool avx512() { return kAvx512; }
bool vectorised() { return kAvx512 || kAvx2; }

float shiftAndMax(const float* x, std::size_t count, float d, float* out) { return shiftAndMaxLoop(x, count, d, out); }

void requantize(const float* acc, const RequantArgs& r, Int8Arithmetic arith, float* out)
{
    if (arith == Int8Arithmetic::Tflite) requantTflite(acc, r, out);
    else if (arith == Int8Arithmetic::TinyEngine) requantTinyEngineF(acc, r, out);
    else if (r.period && kAvx512) requantExactAvx512(acc, r, out);
    else if (r.period) requantExactAvx2(acc, r, out);
    else requantExactF(acc, r, out);
}

void requantize(const std::int32_t* acc, const RequantArgs& r, Int8Arithmetic arith, std::uint8_t* out)
{
    if (arith == Int8Arithmetic::Tflite) requantTflite(acc, r, out);
    else if (arith == Int8Arithmetic::TinyEngine) requantTinyEngineU(acc, r, out);
    else if (r.period && kAvx512) requantExactAvx512(acc, r, out);
    else if (r.period) requantExactAvx2(acc, r, out);
    else requantExactU(acc, r, out);
}

void quantizeInput(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, float* out)
{
    quantizeInputOf(images, n, C, hw, inv, zero, shift, out);
}

void quantizeInput(const float* images, int n, int C, std::size_t hw, float inv, std::int32_t zero, std::int32_t shift, std::uint8_t* out)
{
    quantizeInputOf(images, n, C, hw, inv, zero, shift, out);
}

void mean(const float* x, int images, int hw, int C, std::int32_t shiftIn, std::int32_t shiftOut, bool rounded, float* out)
{
    meanOf(x, images, hw, C, shiftIn, shiftOut, rounded, out);
}

void mean(const std::uint8_t* x, int images, int hw, int C, std::int32_t shiftIn, std::int32_t shiftOut, bool rounded, std::uint8_t* out)
{
    meanOf(x, images, hw, C, shiftIn, shiftOut, rounded, out);
}

void addMul(const float* a, const float* b, bool aGate, bool bGate, int images, std::size_t hw, std::size_t C, Int8Arithmetic arith,
            const Int8Step& s, const std::int32_t shifts[3], float* gateTerms, float* out)
{
    addMulOf(a, b, aGate, bGate, images, hw, C, arith, s, shifts, gateTerms, out);
}

void addMul(const std::uint8_t* a, const std::uint8_t* b, bool aGate, bool bGate, int images, std::size_t hw, std::size_t C,
            Int8Arithmetic arith, const Int8Step& s, const std::int32_t shifts[3], float* gateTerms, std::uint8_t* out)
{
    addMulOf(a, b, aGate, bGate, images, hw, C, arith, s, shifts, gateTerms, out);
}

}  // namespace tinyscope::int8pass
