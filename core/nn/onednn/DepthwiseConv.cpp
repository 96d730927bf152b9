#include "nn/onednn/DepthwiseConv.h"

#include "nn/onednn/Avx512.h"
#include "nn/onednn/OneDnnCommon.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace tinyscope::onednn {

namespace {

constexpr int kLanes = 16;     // floats per AVX-512 vector: one channel block
constexpr int kMostPixels = 8;  // output pixels per register block
// runExpanded fills two channel blocks' tiles per pass where both fit in this many bytes (this
// CPU's L2: an 80 px tile with a 7 × 7 kernel is 484 KB, with 3 × 3 441 KB). Two tiles of 80 px per
// pass measured 1.5–3 % faster on the largest VWW subnet at 160 px (batch 32, two threads) and
// 3–7.5 % on the smallest than one, in the same process, turn by turn (the limit was 512 KB).
constexpr std::size_t kTwoTilesBytes = std::size_t{1} << 20;

// One register block: B output pixels (adjacent, stride S apart in the input) of R output rows
// (1 or 2, adjacent: the second's taps S tile rows further down) for one channel block. `in` points
// at the tile row of the block's first tap, `w` at the block's K×K weight vectors. Kernel rows
// outside [khFrom, khTo) meet only the zero border and are skipped; with two rows the range is the
// union of both rows' ranges, and a row's extra kernel rows read zero border rows (adding zeros).
// Two rows share each weight load and keep twice as many independent FMA chains in flight: one row
// of B pixels at stride 2 has only about K / 2 of its B chains taking an FMA at each input pixel
// (each chain waits on its last FMA's latency), and a row of 5 pixels (10 × 10 maps) only 5.
// Out: float; Bf16 (bfloat16, rounded to nearest even at the store); or int32 (sums of integers,
// exact in float32 below 2^24, converted at the store).
template <typename Out, int K, int S, int B, int R>
TS_AVX512 void rowBlock(const float* in, int rowStride, const float* w, const float* bias, Out* out, int outStride, int outRowStride,
                        __mmask16 mask, bool relu6, int khFrom, int khTo, float* sum)
{
    __m512 acc[R][B];
#pragma GCC unroll 2
    for (int rr = 0; rr < R; ++rr)
#pragma GCC unroll 8
        for (int j = 0; j < B; ++j) acc[rr][j] = _mm512_setzero_ps();
#pragma GCC unroll 1
    for (int kh = khFrom; kh < khTo; ++kh) {
        __m512 wk[K];
#pragma GCC unroll 7
        for (int kw = 0; kw < K; ++kw) wk[kw] = _mm512_load_ps(w + (kh * K + kw) * kLanes);
        const float* r = in + kh * rowStride;
#pragma GCC unroll 24
        for (int iw = 0; iw < (B - 1) * S + K; ++iw) {
#pragma GCC unroll 2
            for (int rr = 0; rr < R; ++rr) {
                const __m512 x = _mm512_load_ps(r + rr * S * rowStride + iw * kLanes);
#pragma GCC unroll 8
                for (int j = 0; j < B; ++j) {
                    const int kw = iw - j * S;
                    if (kw >= 0 && kw < K) acc[rr][j] = _mm512_fmadd_ps(x, wk[kw], acc[rr][j]);
                }
            }
        }
    }
    const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(6.f), b = _mm512_load_ps(bias);
    __m512 total = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int rr = 0; rr < R; ++rr)
#pragma GCC unroll 8
        for (int j = 0; j < B; ++j) {
            __m512 v = _mm512_add_ps(acc[rr][j], b);
            if (relu6) v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
            Out* o = out + rr * outRowStride + j * outStride;
            if constexpr (std::is_same_v<Out, float>) {
                if (sum) total = _mm512_add_ps(total, v);
                _mm512_mask_storeu_ps(o, mask, v);
            } else if constexpr (std::is_same_v<Out, Bf16>) {
                // The sum takes the stored (rounded) values, as a pooling of the stored map would.
                const __m512i bits = roundedBf16Bits(v);
                if (sum) total = _mm512_add_ps(total, floatsOfBits(bits));
                _mm256_mask_storeu_epi16(o, mask, bf16OfBits(bits));
            } else {
                _mm512_mask_storeu_epi32(o, mask, _mm512_cvtps_epi32(v));
            }
        }
    if constexpr (!std::is_same_v<Out, std::int32_t>)
        if (sum) _mm512_store_ps(sum, _mm512_add_ps(_mm512_load_ps(sum), total));
}

template <typename Out>
using BlockFn = void (*)(const float*, int, const float*, const float*, Out*, int, int, __mmask16, bool, int, int, float*);

template <typename Out, int K, int S, int R, std::size_t... I>
constexpr std::array<BlockFn<Out>, kMostPixels> blockTable(std::index_sequence<I...>)
{
    return {&rowBlock<Out, K, S, static_cast<int>(I) + 1, R>...};
}

template <typename Out>
using BlockTables = std::array<std::array<std::array<std::array<BlockFn<Out>, kMostPixels>, 2>, 2>, 4>;

// [kernel index][stride − 1][rows − 1][pixels − 1]; kernel index = kernel / 2 (1, 3, 5, 7).
template <typename Out, int K>
constexpr std::array<std::array<std::array<BlockFn<Out>, kMostPixels>, 2>, 2> kernelTables()
{
    constexpr auto seq = std::make_index_sequence<kMostPixels>();
    return {{{{blockTable<Out, K, 1, 1>(seq), blockTable<Out, K, 1, 2>(seq)}}, {{blockTable<Out, K, 2, 1>(seq), blockTable<Out, K, 2, 2>(seq)}}}};
}
template <typename Out>
BlockTables<Out> makeBlocks()
{
    return {{kernelTables<Out, 1>(), kernelTables<Out, 3>(), kernelTables<Out, 5>(), kernelTables<Out, 7>()}};
}

const BlockTables<float> kFloatBlocks = makeBlocks<float>();
const BlockTables<Bf16> kBf16Blocks = makeBlocks<Bf16>();
const BlockTables<std::int32_t> kInt32Blocks = makeBlocks<std::int32_t>();
const BlockTables<float>& blocksFor(const float*) { return kFloatBlocks; }
const BlockTables<Bf16>& blocksFor(const Bf16*) { return kBf16Blocks; }
const BlockTables<std::int32_t>& blocksFor(const std::int32_t*) { return kInt32Blocks; }

// Copies channel block `cb` of one NHWC image (h × h × c) into the tile's interior; the border
// (pad rows and columns, zeroBorder) stays zero.
template <typename In>
TS_AVX512 void fillTile(const In* image, int h, int c, int cb, __mmask16 mask, float* tile, int wp, int pad)
{
    for (int y = 0; y < h; ++y) {
        const In* s = image + static_cast<std::size_t>(y) * h * c + cb * kLanes;
        float* t = tile + (static_cast<std::size_t>(y + pad) * wp + pad) * kLanes;
        for (int x = 0; x < h; ++x) _mm512_store_ps(t + x * kLanes, loadChannels(s + static_cast<std::size_t>(x) * c, mask));
    }
}

// Zeroes pixels [from, to) of tile row y.
TS_AVX512 void zeroPixels(float* tile, int wp, int y, int from, int to)
{
    for (int x = from; x < to; ++x) _mm512_store_ps(tile + (static_cast<std::size_t>(y) * wp + x) * kLanes, _mm512_setzero_ps());
}

// Zeroes the tile's border: `pad` rows above, the rows below the image (to the tile's end) and `pad`
// columns left and right of every image row.
TS_AVX512 void zeroBorder(float* tile, int h, int wp, int hp, int pad)
{
    for (int y = 0; y < hp; ++y) {
        if (y < pad || y >= pad + h) {
            zeroPixels(tile, wp, y, 0, wp);
        } else {
            zeroPixels(tile, wp, y, 0, pad);
            zeroPixels(tile, wp, y, pad + h, wp);
        }
    }
}

// The expansion's sums of `Count` channel blocks for B pixels, starting from the bias.
template <int B, int Count>
TS_AVX512 __attribute__((always_inline)) inline void startFromBias(__m512 (&acc)[Count][B], const float* be)
{
#pragma GCC unroll 2
    for (int g = 0; g < Count; ++g) {
        const __m512 b = _mm512_load_ps(be + g * kLanes);
#pragma GCC unroll 16
        for (int j = 0; j < B; ++j) acc[g][j] = b;
    }
}

// What a tile holds of an expansion's sum (16 channels): ReLU6, and in bf16 plans rounded to
// bfloat16 (ties to even), what oneDNN's expansion conv would have stored.
template <bool RoundToBf16>
struct Relu6Of {
    TS_AVX512 __attribute__((always_inline)) inline __m512 operator()(int, __m512 sum) const
    {
        const __m512 v = _mm512_min_ps(_mm512_max_ps(sum, _mm512_setzero_ps()), _mm512_set1_ps(6.f));
        if constexpr (RoundToBf16) return roundedToBf16(v);
        return v;
    }
};

// The expansion's sums stored in the tiles t0 (and t1), each at its pixel's place (pixels p0 …
// p0 + B − 1 of an h × h map, crossing rows), as finish(block, sum) gives them.
template <int B, int Count, typename Sum, typename Finish>
TS_AVX512 __attribute__((always_inline)) inline void storeExpanded(const Sum (&acc)[Count][B], int p0, int h, float* t0, float* t1, int wp, int pad,
                                                                  const Finish& finish)
{
    int y = p0 / h, x = p0 % h;
#pragma GCC unroll 16
    for (int j = 0; j < B; ++j) {
        const std::size_t at = (static_cast<std::size_t>(y + pad) * wp + x + pad) * kLanes;
#pragma GCC unroll 2
        for (int g = 0; g < Count; ++g) _mm512_store_ps((g == 0 ? t0 : t1) + at, finish(g, acc[g][j]));
        if (++x == h) {
            x = 0;
            ++y;
        }
    }
}

// The expansion for `Count` (1 or 2) channel blocks, B pixels from p0 of an h × h map (runs cross
// rows: a row of a 5 × 5 map alone would keep only 5 FMA chains in flight): ReLU6(be + Σ_i
// s[p·cin + i] · we[i]), the sum starting from the bias and adding the input channels in order (one
// FMA per input channel, the pixel's value broadcast), stored at the pixel's place in tile t0 (and
// t1). With two blocks each broadcast value feeds two FMAs: B + 2 loads for 2B FMAs, not B + 1 for B.
template <int B, int Count>
TS_AVX512 void expandPixels(const float* image, int p0, int h, int cin, const float* we, const float* be, float* t0, float* t1, int wp, int pad)
{
    const float* s = image + static_cast<std::size_t>(p0) * cin;
    const float* we1 = we + static_cast<std::size_t>(cin) * kLanes;   // the second block's weights
    __m512 acc[Count][B];
    startFromBias(acc, be);
#pragma GCC unroll 2
    for (int i = 0; i < cin; ++i) {
        __m512 w[Count];
        w[0] = _mm512_load_ps(we + static_cast<std::size_t>(i) * kLanes);
        if constexpr (Count == 2) w[1] = _mm512_load_ps(we1 + static_cast<std::size_t>(i) * kLanes);
#pragma GCC unroll 16
        for (int j = 0; j < B; ++j) {
            const __m512 x = _mm512_set1_ps(s[static_cast<std::size_t>(j) * cin + i]);
#pragma GCC unroll 2
            for (int g = 0; g < Count; ++g) acc[g][j] = _mm512_fmadd_ps(x, w[g], acc[g][j]);
        }
    }
    storeExpanded(acc, p0, h, t0, t1, wp, pad, Relu6Of<false>{});
}

// bf16 plans: `Count` (1 or 2) channel blocks of the expansion from bfloat16 input, B pixels from
// p0, with vdpbf16ps: a step takes two input channels — the pixel's pair (2k, 2k + 1) broadcast as
// one dword — against a vector of 16 weight pairs, adding the product of channel 2k + 1 and then of
// channel 2k to each float32 sum (each an FMA with round to nearest even; bfloat16 products are
// exact in float32); then + bias (the sum starts from it), ReLU6, and rounded to bfloat16, what
// oneDNN's bf16 expansion conv would store (its sums also vdpbf16ps, in its own channel order).
template <int B, int Count>
TS_AVX512_BF16 void expandPixelsBf16(const Bf16* image, int p0, int h, int cin, const float* wp2, const float* be, float* t0, float* t1, int wp,
                                     int pad)
{
    const Bf16* s = image + static_cast<std::size_t>(p0) * cin;
    const int pairs = cin / 2;
    const float* wp21 = wp2 + static_cast<std::size_t>(pairs) * kLanes;   // the second block's pairs
    __m512 acc[Count][B];
    startFromBias(acc, be);
#pragma GCC unroll 2
    for (int k = 0; k < pairs; ++k) {
        __m512bh w[Count];
        w[0] = reinterpret_cast<__m512bh>(_mm512_load_si512(wp2 + static_cast<std::size_t>(k) * kLanes));
        if constexpr (Count == 2) w[1] = reinterpret_cast<__m512bh>(_mm512_load_si512(wp21 + static_cast<std::size_t>(k) * kLanes));
#pragma GCC unroll 16
        for (int j = 0; j < B; ++j) {
            std::int32_t pair;
            std::memcpy(&pair, s + static_cast<std::size_t>(j) * cin + 2 * k, sizeof pair);
            const __m512bh x = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
#pragma GCC unroll 2
            for (int g = 0; g < Count; ++g) acc[g][j] = _mm512_dpbf16_ps(acc[g][j], w[g], x);
        }
    }
    storeExpanded(acc, p0, h, t0, t1, wp, pad, Relu6Of<true>{});
}

// The int8 plan's expansion requantised into a tile (Int8Expansion): int8k::convExact on 16 int32
// sums — converted to float (round to nearest), + bias, × scale (two roundings), rounded to nearest
// even, + zy, clamped to int8 — minus the depthwise conv's zero point, as float. Computed in float:
// the product rounded to an integral float (vrndscaleps, nearest even), + (zy − zdw), clamped to
// [−128 − zdw, 127 − zdw]. Equal to the integer steps (vcvtps2dq, + zy, clamp, − zdw) wherever the
// product's magnitude stays below 2^31, which the constructor proves for every reachable sum
// (int8ExpansionFitsInt32): the rounded value is an integer; adding |zy − zdw| ≤ 255 is exact below
// 2^24, and above it keeps its sign and far exceeds the clamp bounds, which it meets either way.
struct Int8Requant {
    const float* params;   // the first block's comp (int32 bits), bias, scale: [3][16] per block
    std::int32_t zy, depthwiseZero;
};
struct RequantToTile {
    __m512i comp[4];
    __m512 bias[4], scale[4];
    __m512 shift, lo, hi;   // zy − zdw, −128 − zdw, 127 − zdw
    TS_AVX512 __attribute__((always_inline)) inline __m512 operator()(int g, __m512i sum) const
    {
        const __m512 f = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sum, comp[g])), bias[g]), scale[g]);
        const __m512 r = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), shift);
        return _mm512_min_ps(_mm512_max_ps(r, lo), hi);
    }
};
constexpr int kInt8ParamFloats = 3 * kLanes;   // comp, bias, scale of one block

// acc += the four-byte dot products of x (uint8) and w (int8) per lane: vpdpbusd, written as an asm
// statement whose accumulator is tied to one register. With _mm512_dpbusd_epi32, GCC 12 copied every
// accumulator to a scratch register and back around each vpdpbusd and, with 18 or more of them,
// through the stack (fused blocks then ran 0.73–0.99× oneDNN's 1×1 + requantisation + our depthwise
// conv on maps below 40 px; docs/ONEDNN.md).
TS_AVX512_VNNI __attribute__((always_inline)) inline void dpbusd(__m512i& acc, __m512i x, __m512i w)
{
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
}

// The int8 expansion for `Count` (1 or 2) channel blocks, B pixels from p0 of an h × h map of stored
// values x + 128: each sum starts from the block's comp and takes four input channels per step —
// each pixel's four bytes broadcast as a dword against 16 lanes × 4 int8 weights, added by vpdpbusd
// (exact int32, no saturation) — then is requantised into the tiles. Masked (cin not a multiple of
// 4): every quad's bytes read under a mask, the last one's past cin as zeros (their weights are zero
// too); one loop either way (a separate tail step made GCC keep the accumulators on the stack). The
// requantisation's constants are loaded after the sums: 24 accumulators, two weight vectors and the
// broadcast input fill the registers until then.
template <int B, int Count, bool Masked>
TS_AVX512_VNNI void expandPixelsInt8(const std::uint8_t* image, int p0, int h, int cin, const float* wq, const Int8Requant& q, float* t0, float* t1,
                                     int wp, int pad)
{
    const std::uint8_t* s = image + static_cast<std::size_t>(p0) * cin;
    const int steps = (cin + 3) / 4;
    const __mmask16 last = static_cast<__mmask16>(cin % 4 ? (1u << (cin % 4)) - 1u : 0xFu);
    const float* wq1 = wq + static_cast<std::size_t>(steps) * kLanes;   // the second block's weights
    __m512i acc[Count][B];
#pragma GCC unroll 2
    for (int g = 0; g < Count; ++g)
#pragma GCC unroll 16
        for (int j = 0; j < B; ++j) acc[g][j] = _mm512_setzero_si512();
#pragma GCC unroll 1
    for (int k = 0; k < steps; ++k) {
        __m512i w[Count];
        w[0] = _mm512_load_si512(wq + static_cast<std::size_t>(k) * kLanes);
        if constexpr (Count == 2) w[1] = _mm512_load_si512(wq1 + static_cast<std::size_t>(k) * kLanes);
        [[maybe_unused]] const __mmask16 m = k + 1 < steps ? __mmask16{0xF} : last;
#pragma GCC unroll 16
        for (int j = 0; j < B; ++j) {
            const std::uint8_t* p = s + static_cast<std::size_t>(j) * cin + 4 * k;
            __m512i x;
            if constexpr (Masked) {
                x = _mm512_broadcastd_epi32(_mm_maskz_loadu_epi8(m, p));
            } else {
                std::int32_t quad;
                std::memcpy(&quad, p, sizeof quad);
                x = _mm512_set1_epi32(quad);
            }
#pragma GCC unroll 2
            for (int g = 0; g < Count; ++g) dpbusd(acc[g][j], x, w[g]);
        }
    }
    RequantToTile finish;
#pragma GCC unroll 4
    for (int g = 0; g < Count; ++g) {
        const float* p = q.params + g * kInt8ParamFloats;
        finish.comp[g] = _mm512_load_si512(p);
        finish.bias[g] = _mm512_load_ps(p + kLanes);
        finish.scale[g] = _mm512_load_ps(p + 2 * kLanes);
    }
    finish.shift = _mm512_set1_ps(static_cast<float>(q.zy - q.depthwiseZero));
    finish.lo = _mm512_set1_ps(static_cast<float>(-128 - q.depthwiseZero));
    finish.hi = _mm512_set1_ps(static_cast<float>(127 - q.depthwiseZero));
    storeExpanded(acc, p0, h, t0, t1, wp, pad, finish);
}

constexpr int kMostExpandPixels = 16, kMostExpandPixels2 = 12;   // 16 and 24 accumulators
// What an expansion kernel takes beside its weights: the bias (float, bfloat16 input) or the int8
// requantisation (uint8 input).
template <typename In>
using ExpandParams = std::conditional_t<std::is_same_v<In, std::uint8_t>, const Int8Requant&, const float*>;
template <typename In>
using ExpandFn = void (*)(const In*, int, int, int, const float*, ExpandParams<In>, float*, float*, int, int);
// Masked: the int8 kernel for a channel count not divisible by 4 (the others ignore it).
template <typename In, int Count, bool Masked, std::size_t... I>
constexpr std::array<ExpandFn<In>, sizeof...(I)> expandTable(std::index_sequence<I...>)
{
    if constexpr (std::is_same_v<In, float>)
        return {&expandPixels<static_cast<int>(I) + 1, Count>...};
    else if constexpr (std::is_same_v<In, Bf16>)
        return {&expandPixelsBf16<static_cast<int>(I) + 1, Count>...};
    else
        return {&expandPixelsInt8<static_cast<int>(I) + 1, Count, Masked>...};
}

// The tiles' interiors for `count` (1 or 2) channel blocks (weights `we`: the first block's, as
// [cin][16] floats, bf16 plans' [cin / 2][16] pairs or the int8 plan's [⌈cin / 4⌉][16] quads; `be`
// the bias or the int8 requantisation) computed from one NHWC image of the expansion's input (h × h ×
// cin), its pixels in runs of nearly equal size. The weights of lanes past the last channel are zero
// (those lanes' values are never stored: each lane is its own channel).
template <typename In>
TS_AVX512 void expandTiles(const In* image, int h, int cin, const float* we, ExpandParams<In> be, int count, float* tile, std::size_t tileFloats,
                           int wp, int pad)
{
    static const auto one = expandTable<In, 1, false>(std::make_index_sequence<kMostExpandPixels>());
    static const auto two = expandTable<In, 2, false>(std::make_index_sequence<kMostExpandPixels2>());
    static const auto oneMasked = expandTable<In, 1, true>(std::make_index_sequence<kMostExpandPixels>());
    static const auto twoMasked = expandTable<In, 2, true>(std::make_index_sequence<kMostExpandPixels2>());
    const bool masked = std::is_same_v<In, std::uint8_t> && cin % 4 != 0;
    const auto& ones = masked ? oneMasked : one;
    const auto& twos = masked ? twoMasked : two;
    const int pixels = h * h, most = count == 2 ? kMostExpandPixels2 : kMostExpandPixels, runs = (pixels + most - 1) / most;
    for (int r = 0, p = 0; r < runs; ++r) {
        const int width = pixels / runs + (r < pixels % runs ? 1 : 0);
        const ExpandFn<In> f = count == 2 ? twos[width - 1] : ones[width - 1];
        f(image, p, h, cin, we, be, tile, tile + tileFloats, wp, pad);
        p += width;
    }
}

}  // namespace

bool DepthwiseConv::available()
{
    return hasAvx512();
}

bool DepthwiseConv::supports(int kernel, int stride)
{
    return kernel >= 1 && kernel <= 7 && kernel % 2 == 1 && (stride == 1 || stride == 2);
}

DepthwiseConv::DepthwiseConv(int channels, int h, int kernel, int stride, int pad, const float* weight, const float* bias,
                             bool relu6, const Expansion* expansion)
    : c_(channels), h_(h), k_(kernel), s_(stride), pad_(pad), ho_((h + 2 * pad - kernel) / stride + 1),
      blocks_((channels + kLanes - 1) / kLanes), relu6_(relu6)
{
    if (!supports(kernel, stride) || channels < 1 || h < 1 || pad < 0 || ho_ < 1)
        throw std::invalid_argument("DepthwiseConv: no kernel for " + std::to_string(kernel) + "x" + std::to_string(kernel) +
                                    " stride " + std::to_string(stride) + " on " + std::to_string(h) + " px");
    const std::size_t taps = static_cast<std::size_t>(kernel) * kernel;
    packed_ = std::make_unique<PackedWeights>(blocks_ * taps * kLanes, static_cast<std::size_t>(blocks_) * kLanes);
    for (int ch = 0; ch < channels; ++ch) {
        const int cb = ch / kLanes, lane = ch % kLanes;
        for (std::size_t t = 0; t < taps; ++t) packed_->weights.data[(cb * taps + t) * kLanes + lane] = weight[ch * taps + t];
        packed_->bias.data[cb * kLanes + lane] = bias ? bias[ch] : 0.f;
    }
    if (expansion) {
        const int cin = expansion->cin;
        if (cin < 1) throw std::invalid_argument("DepthwiseConv: an expansion from " + std::to_string(cin) + " channels");
        expansionCin_ = cin;
        // bfloat16 pairs for bf16 plans (runExpanded's Bf16 overload): [block][pair][16 lanes × (2k, 2k + 1)],
        // each weight rounded to bfloat16 (the caller has rounded them: exact then).
        if (cin % 2 == 0) {
            expansionPairs_ = std::make_unique<Buffer>(static_cast<std::size_t>(blocks_) * (cin / 2) * kLanes);
            auto* bits = reinterpret_cast<std::uint16_t*>(expansionPairs_->data);
            for (int ch = 0; ch < channels; ++ch) {
                const int cb = ch / kLanes, lane = ch % kLanes;
                for (int i = 0; i < cin; ++i)
                    bits[((static_cast<std::size_t>(cb) * (cin / 2) + i / 2) * kLanes + lane) * 2 + i % 2] =
                        static_cast<std::uint16_t>(nearestBf16(expansion->weight[static_cast<std::size_t>(ch) * cin + i]));
            }
        }
        setExpansionGroup();
        expansion_ = std::make_unique<PackedWeights>(static_cast<std::size_t>(blocks_) * cin * kLanes, static_cast<std::size_t>(blocks_) * kLanes);
        for (int ch = 0; ch < channels; ++ch) {
            const int cb = ch / kLanes, lane = ch % kLanes;
            for (int i = 0; i < cin; ++i)
                expansion_->weights.data[(static_cast<std::size_t>(cb) * cin + i) * kLanes + lane] = expansion->weight[static_cast<std::size_t>(ch) * cin + i];
            expansion_->bias.data[cb * kLanes + lane] = expansion->bias ? expansion->bias[ch] : 0.f;
        }
    }
}

DepthwiseConv::DepthwiseConv(int channels, int h, int kernel, int stride, int pad, const float* weight, const Int8Expansion& e)
    : DepthwiseConv(channels, h, kernel, stride, pad, weight, nullptr, false)
{
    const int cin = e.cin;
    if (cin < 1) throw std::invalid_argument("DepthwiseConv: an int8 expansion from " + std::to_string(cin) + " channels");
    if (!int8ExpansionFitsInt32(channels, e))
        throw std::invalid_argument("DepthwiseConv: an int8 expansion whose requantised sums could leave int32's range");
    expansionCin_ = cin;
    int8Zy_ = e.zy;
    int8DepthwiseZero_ = e.depthwiseZero;
    // [block][quad][16 lanes × 4 int8] weights, then [block][comp, bias, scale][16].
    const std::size_t quads = static_cast<std::size_t>(cin + 3) / 4, weightFloats = static_cast<std::size_t>(blocks_) * quads * kLanes;
    int8Expansion_ = std::make_unique<Buffer>(weightFloats + static_cast<std::size_t>(blocks_) * kInt8ParamFloats);
    auto* bytes = reinterpret_cast<std::int8_t*>(int8Expansion_->data);
    float* params = int8Expansion_->data + weightFloats;
    for (int ch = 0; ch < channels; ++ch) {
        const int cb = ch / kLanes, lane = ch % kLanes;
        for (int i = 0; i < cin; ++i) {
            const std::int32_t w = e.weight[static_cast<std::size_t>(ch) * cin + i];
            if (w < -128 || w > 127) throw std::invalid_argument("DepthwiseConv: an int8 expansion weight outside int8: " + std::to_string(w));
            bytes[((static_cast<std::size_t>(cb) * quads + i / 4) * kLanes + lane) * 4 + i % 4] = static_cast<std::int8_t>(w);
        }
        float* p = params + static_cast<std::size_t>(cb) * kInt8ParamFloats;
        std::memcpy(p + lane, &e.comp[ch], sizeof(float));
        p[kLanes + lane] = e.bias[ch];
        p[2 * kLanes + lane] = e.scale[ch];
    }
    setExpansionGroup();
}

bool DepthwiseConv::int8ExpansionFitsInt32(int channels, const Int8Expansion& e)
{
    for (int ch = 0; ch < channels; ++ch) {
        // |Σ w · stored + comp| ≤ 255 · Σ|w| + |comp| (stored values 0 … 255), then + |bias|, × |scale|,
        // with room for the float roundings.
        double sum = std::fabs(static_cast<double>(e.comp[ch]));
        for (int i = 0; i < e.cin; ++i) sum += 255.0 * std::abs(e.weight[static_cast<std::size_t>(ch) * e.cin + i]);
        if (!((sum + std::fabs(static_cast<double>(e.bias[ch]))) * std::fabs(static_cast<double>(e.scale[ch])) * (1 + 1e-5) < 2147483648.0 / 2))
            return false;
    }
    return true;
}

// Two channel blocks per expansion pass where two tiles fit in kTwoTilesBytes (L2).
void DepthwiseConv::setExpansionGroup()
{
    expansionGroup_ = blocks_ >= 2 && 2 * tileFloats() * sizeof(float) <= kTwoTilesBytes ? 2 : 1;
}

DepthwiseConv::~DepthwiseConv() = default;
DepthwiseConv::DepthwiseConv(DepthwiseConv&&) noexcept = default;
DepthwiseConv& DepthwiseConv::operator=(DepthwiseConv&&) noexcept = default;

// The tile: the image with `pad` zero columns left and right, `pad` zero rows above and pad + kExtraRows
// below — a pair of output rows reads up to stride − 1 rows past the last row one row would read.
constexpr int kExtraRows = 2;

std::size_t DepthwiseConv::tileFloats() const
{
    const std::size_t wp = static_cast<std::size_t>(h_) + 2 * pad_;
    return wp * (wp + kExtraRows) * kLanes;
}

std::size_t DepthwiseConv::scratchFloats() const { return tileFloats() * std::max(1, expansionGroup_); }

template <typename Out, typename Fill>
void DepthwiseConv::runWith(Out* dst, int n, float* scratch, int group, Fill&& fill, Out* means) const
{
    const int wp = h_ + 2 * pad_, rowStride = wp * kLanes;
    const std::size_t tile = tileFloats();
    for (int g = 0; g < group; ++g) zeroBorder(scratch + g * tile, h_, wp, wp + kExtraRows, pad_);   // interiors filled per block
    const auto& fns = blocksFor(dst)[k_ / 2][s_ - 1];
    const std::size_t outRow = static_cast<std::size_t>(ho_) * c_;
    // Each output row in nb blocks of nearly equal width (≤ 8): 10 → 5 + 5, 20 → 7 + 7 + 6.
    const int nb = (ho_ + kMostPixels - 1) / kMostPixels;
    const std::size_t taps = static_cast<std::size_t>(k_) * k_;
    // Channel blocks (`group` at a time) outside, images inside: a block's weights (and an
    // expansion's) stay in L1 while it runs over the images.
    for (int first = 0; first < blocks_; first += group) {
        const int count = std::min(group, blocks_ - first);
        for (int img = 0; img < n; ++img) {
            fill(img, first, count, scratch);
            Out* out = dst + static_cast<std::size_t>(img) * ho_ * ho_ * c_;
            for (int cb = first; cb < first + count; ++cb) {
                const __mmask16 mask = tailMask(static_cast<std::size_t>(c_ - cb * kLanes));
                const float* w = packed_->weights.data + cb * taps * kLanes;
                const float* b = packed_->bias.data + cb * kLanes;
                const float* t = scratch + (cb - first) * tile;
                alignas(64) float sums[kLanes] = {};   // the block's output summed over the image (means)
                for (int oh = 0; oh < ho_;) {
                    const int rows = oh + 1 < ho_ ? 2 : 1;   // output rows in pairs, the last one alone if ho is odd
                    // Kernel rows that meet the image: input row oh·s + kh − pad within [0, h); for a
                    // pair, the union of both rows' ranges (the second's starts lower, the first's ends higher).
                    const int khFrom = std::max(0, pad_ - (oh + rows - 1) * s_), khTo = std::min(k_, h_ + pad_ - oh * s_);
                    const float* row = t + static_cast<std::size_t>(oh) * s_ * rowStride;
                    Out* o = out + static_cast<std::size_t>(oh) * outRow + cb * kLanes;
                    int ow = 0;
                    for (int blk = 0; blk < nb; ++blk) {
                        const int width = ho_ / nb + (blk < ho_ % nb ? 1 : 0);
                        fns[rows - 1][width - 1](row + ow * s_ * kLanes, rowStride, w, b, o + static_cast<std::size_t>(ow) * c_, c_,
                                                 static_cast<int>(outRow), mask, relu6_, khFrom, khTo, means ? sums : nullptr);
                        ow += width;
                    }
                    oh += rows;
                }
                if constexpr (!std::is_same_v<Out, std::int32_t>)
                    if (means) {
                        const float inv = 1.f / static_cast<float>(ho_ * ho_);
                        for (int l = 0; l < kLanes && cb * kLanes + l < c_; ++l) {
                            Out& m = means[static_cast<std::size_t>(img) * c_ + cb * kLanes + l];
                            if constexpr (std::is_same_v<Out, Bf16>)
                                m = nearestBf16(sums[l] * inv);
                            else
                                m = sums[l] * inv;
                        }
                    }
            }
        }
    }
}

template <typename In, typename Out>
void DepthwiseConv::runAs(const In* src, Out* dst, int n, float* scratch, Out* means) const
{
    const int wp = h_ + 2 * pad_;
    runWith(dst, n, scratch, 1, [&](int img, int cb, int, float* tile) {
        fillTile(src + static_cast<std::size_t>(img) * h_ * h_ * c_, h_, c_, cb, tailMask(static_cast<std::size_t>(c_ - cb * kLanes)), tile, wp, pad_);
    }, means);
}

void DepthwiseConv::run(const float* src, float* dst, int n, float* scratch, float* means) const { runAs(src, dst, n, scratch, means); }

void DepthwiseConv::run(const Bf16* src, Bf16* dst, int n, float* scratch, Bf16* means) const { runAs(src, dst, n, scratch, means); }

bool DepthwiseConv::bf16ExpansionAvailable() { return hasAvx512Bf16(); }

bool DepthwiseConv::expandsBf16() const { return expansionPairs_ != nullptr && bf16ExpansionAvailable(); }

void DepthwiseConv::runExpanded(const Bf16* src, Bf16* dst, int n, float* scratch, Bf16* means) const
{
    if (!expandsBf16()) throw std::logic_error("DepthwiseConv: a bf16 expansion needs an even input channel count and AVX-512 BF16");
    const int wp = h_ + 2 * pad_, cin = expansionCin_;
    const std::size_t tile = tileFloats();
    runWith(dst, n, scratch, expansionGroup_, [&](int img, int cb, int count, float* tiles) {
        expandTiles(src + static_cast<std::size_t>(img) * h_ * h_ * cin, h_, cin,
                        expansionPairs_->data + static_cast<std::size_t>(cb) * (cin / 2) * kLanes, expansion_->bias.data + cb * kLanes, count, tiles,
                        tile, wp, pad_);
    }, means);
}

void DepthwiseConv::runExpanded(const float* src, float* dst, int n, float* scratch, float* means) const
{
    if (!expands()) throw std::logic_error("DepthwiseConv: runExpanded without an expansion");
    const int wp = h_ + 2 * pad_, cin = expansionCin_;
    const std::size_t tile = tileFloats();
    runWith(dst, n, scratch, expansionGroup_, [&](int img, int cb, int count, float* tiles) {
        expandTiles(src + static_cast<std::size_t>(img) * h_ * h_ * cin, h_, cin, expansion_->weights.data + static_cast<std::size_t>(cb) * cin * kLanes,
                    expansion_->bias.data + cb * kLanes, count, tiles, tile, wp, pad_);
    }, means);
}

bool DepthwiseConv::int8ExpansionAvailable() { return hasAvx512Vnni(); }

void DepthwiseConv::runExpanded(const std::uint8_t* src, std::int32_t* dst, int n, float* scratch) const
{
    if (!expandsInt8() || !int8ExpansionAvailable()) throw std::logic_error("DepthwiseConv: an int8 expansion needs its constructor and AVX-512 VNNI");
    const int wp = h_ + 2 * pad_, cin = expansionCin_;
    const std::size_t tile = tileFloats(), quads = static_cast<std::size_t>(cin + 3) / 4;
    const float* params = int8Expansion_->data + static_cast<std::size_t>(blocks_) * quads * kLanes;
    runWith(dst, n, scratch, expansionGroup_, [&](int img, int cb, int count, float* tiles) {
        const Int8Requant q{params + static_cast<std::size_t>(cb) * kInt8ParamFloats, int8Zy_, int8DepthwiseZero_};
        expandTiles<std::uint8_t>(src + static_cast<std::size_t>(img) * h_ * h_ * cin, h_, cin, int8Expansion_->data + cb * quads * kLanes, q, count,
                                  tiles, tile, wp, pad_);
    });
}

void DepthwiseConv::run(const std::uint8_t* src, std::int32_t* dst, int n, float* scratch) const
{
    if (relu6_) throw std::logic_error("DepthwiseConv: integer sums take no ReLU6");
    runAs(src, dst, n, scratch);
}

}  // namespace tinyscope::onednn
