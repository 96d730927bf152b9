#include "nn/onednn/PointwiseConv.h"

#include "nn/onednn/Avx512.h"
#include "nn/onednn/OneDnnCommon.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <string>

namespace tinyscope::onednn {

namespace {

constexpr int kLanes = 16;
constexpr int kMostAccumulators = 24;   // + the group's weight vectors and three broadcasts: ≤ 32 registers

// Every group's V sums start from the bias (V vectors).
template <int R, int V>
TS_AVX512 __attribute__((always_inline)) inline void startFromBias(__m512 (&acc)[R][V], const float* bias)
{
#pragma GCC unroll 5
    for (int v = 0; v < V; ++v) {
        const __m512 b = _mm512_load_ps(bias + v * kLanes);
#pragma GCC unroll 24
        for (int r = 0; r < R; ++r) acc[r][v] = b;
    }
}

// The groups' sums (+ what `out` holds, Add) stored at `out`: float, or bfloat16 rounded to nearest
// even once (Avx512.h's toBf16: the rounding vcvtneps2bf16 gives, on AVX-512 F integer ops). Half:
// the second pixel of the one group (G = 2) is not stored — vectors above S skipped, S masked to
// its first 8 lanes.
template <bool Add, bool Half, int R, int V, typename T>
TS_AVX512 __attribute__((always_inline)) inline void storeGroups(__m512 (&acc)[R][V], T* out)
{
    constexpr int S = (V - 1) / 2;
#pragma GCC unroll 24
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 5
        for (int v = 0; v < V; ++v) {
            if (Half && v > S) continue;
            const __mmask16 mask = Half && v == S ? 0x00FF : 0xFFFF;
            T* o = out + (r * V + v) * kLanes;
            __m512 y = acc[r][v];
            if constexpr (Add) y = _mm512_add_ps(y, loadChannels(o, mask));
            if constexpr (std::is_same_v<T, float>)
                _mm512_mask_storeu_ps(o, mask, y);
            else
                _mm256_mask_storeu_epi16(o, mask, toBf16(y));
        }
}

// One register block: R groups of G pixels, each group's output V vectors (G · cout = 16 · V floats,
// one run in NHWC). `in`: the block's first pixel's input (cin floats per pixel), `out`: its output.
// Each sum starts from the bias and takes the input channels in order. G = 2: vectors below S hold
// the first pixel's channels, above S the second's, S half of each (lanes 0–7 the first pixel's last
// 8 channels). Half (G = 2, R = 1): the group's second pixel does not exist — neither read nor written.
template <int V, int G, int R, bool Add, bool Half>
TS_AVX512 void groupBlock(const float* in, int cin, const float* w, const float* bias, float* out)
{
    constexpr int S = (V - 1) / 2;
    __m512 acc[R][V];
    startFromBias(acc, bias);
    for (int k = 0; k < cin; ++k, w += V * kLanes) {
        __m512 wv[V];
#pragma GCC unroll 5
        for (int v = 0; v < V; ++v) wv[v] = _mm512_load_ps(w + v * kLanes);
#pragma GCC unroll 24
        for (int r = 0; r < R; ++r) {
            const float* x = in + static_cast<std::size_t>(r) * G * cin + k;
            __m512 x0 = _mm512_set1_ps(x[0]);
            if constexpr (G == 1) {
#pragma GCC unroll 5
                for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(x0, wv[v], acc[r][v]);
            } else {
                __m512 x1 = Half ? x0 : _mm512_set1_ps(x[cin]);
                // Both broadcasts in registers: else GCC folds the blend into a second, masked
                // broadcast load and the FMAs into broadcasts from memory (three loads a group, not two).
                asm("" : "+v"(x0), "+v"(x1));
                const __m512 xs = _mm512_mask_blend_ps(0xFF00, x0, x1);
#pragma GCC unroll 5
                for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(v < S ? x0 : v == S ? xs : x1, wv[v], acc[r][v]);
            }
        }
    }
    storeGroups<Add, Half>(acc, out);
}

// bf16 plans: the same register block on bfloat16 maps with vdpbf16ps. A step takes the input
// channel pair (2k, 2k + 1) of a pixel, broadcast as one dword, against V vectors of 16 weight pairs
// (`w`: [cin / 2][V][16][2] bfloat16): each float32 sum adds channel 2k + 1's product, then 2k's (an
// FMA each, round to nearest even; bfloat16 products are exact in float32). The sums start from the
// bias; the residual (bfloat16, as float) is added before the one rounding to bfloat16 as they are
// stored. cin even.
template <int V, int G, int R, bool Add, bool Half>
TS_AVX512_BF16 void groupBlockBf16(const Bf16* in, int cin, const float* w, const float* bias, Bf16* out)
{
    constexpr int S = (V - 1) / 2;
    __m512 acc[R][V];
    startFromBias(acc, bias);
    for (int k = 0; k < cin; k += 2, w += V * kLanes) {
        __m512bh wv[V];
#pragma GCC unroll 5
        for (int v = 0; v < V; ++v) wv[v] = reinterpret_cast<__m512bh>(_mm512_load_si512(w + v * kLanes));
#pragma GCC unroll 24
        for (int r = 0; r < R; ++r) {
            const Bf16* x = in + static_cast<std::size_t>(r) * G * cin + k;
            std::int32_t p0;
            std::memcpy(&p0, x, sizeof p0);
            __m512i x0 = _mm512_set1_epi32(p0);
            if constexpr (G == 1) {
#pragma GCC unroll 5
                for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], reinterpret_cast<__m512bh>(x0), wv[v]);
            } else {
                std::int32_t p1 = p0;
                if (!Half) std::memcpy(&p1, x + cin, sizeof p1);
                __m512i x1 = _mm512_set1_epi32(p1);
                asm("" : "+v"(x0), "+v"(x1));   // as groupBlock: both broadcasts in registers
                const __m512i xs = _mm512_mask_blend_epi32(0xFF00, x0, x1);
#pragma GCC unroll 5
                for (int v = 0; v < V; ++v)
                    acc[r][v] = _mm512_dpbf16_ps(acc[r][v], reinterpret_cast<__m512bh>(v < S ? x0 : v == S ? xs : x1), wv[v]);
            }
        }
    }
    storeGroups<Add, Half>(acc, out);
}

// A channel count's code: blocks of `groups` groups, single groups for the rest, a last lone pixel.
template <class Fn>
struct Kernels {
    int group = 0, vectors = 0, groups = 0;
    Fn block = nullptr, one = nullptr, half = nullptr;
};

template <class Fn, int V, int G, bool Add>
constexpr Kernels<Fn> kernelsOf()
{
    constexpr int R = kMostAccumulators / V;
    if constexpr (std::is_same_v<Fn, PointwiseConv::BlockFn>)
        return {G, V, R, &groupBlock<V, G, R, Add, false>, &groupBlock<V, G, 1, Add, false>,
                G == 2 ? &groupBlock<V, G, 1, Add, true> : nullptr};
    else
        return {G, V, R, &groupBlockBf16<V, G, R, Add, false>, &groupBlockBf16<V, G, 1, Add, false>,
                G == 2 ? &groupBlockBf16<V, G, 1, Add, true> : nullptr};
}

template <class Fn, bool Add>
Kernels<Fn> kernelsFor(int cout)
{
    // The counts measured faster than oneDNN's 1×1 conv on the VWW subnets (docs/ONEDNN.md, "Our
    // projection kernel"). 16 ran at parity (one broadcast load per FMA either way); 32 and 64 give
    // oneDNN no padding either and are left to it.
    switch (cout) {
    case 24: return kernelsOf<Fn, 3, 2, Add>();
    case 40: return kernelsOf<Fn, 5, 2, Add>();
    case 48: return kernelsOf<Fn, 3, 1, Add>();
    case 80: return kernelsOf<Fn, 5, 1, Add>();
    default: return {};
    }
}

template <class Fn>
Kernels<Fn> kernelsFor(int cout, bool add) { return add ? kernelsFor<Fn, true>(cout) : kernelsFor<Fn, false>(cout); }

// dst[k][·] = w[k][·] · g[k] for `rows` rows of `width` floats (a multiple of 16, 64-byte aligned).
TS_AVX512 void scaleRows(const float* w, const float* g, int rows, std::size_t width, float* dst)
{
    for (int k = 0; k < rows; ++k) {
        const __m512 gk = _mm512_set1_ps(g[k]);
        for (std::size_t l = 0; l < width; l += kLanes) _mm512_store_ps(dst + k * width + l, _mm512_mul_ps(_mm512_load_ps(w + k * width + l), gk));
    }
}

// 16 floats alternating a, b, a, b, ….
TS_AVX512 inline __m512 alternating(float a, float b)
{
    std::uint32_t ba, bb;
    std::memcpy(&ba, &a, sizeof ba);
    std::memcpy(&bb, &b, sizeof bb);
    return _mm512_castsi512_ps(_mm512_set1_epi64(static_cast<long long>((static_cast<std::uint64_t>(bb) << 32) | ba)));
}

// bf16: dst = w · g rounded to bfloat16, w the packed pairs ([pairs][width / 2][2] bfloat16, width a
// multiple of 32), channel 2k + e of the pair row k scaled by g[2k + e]; dst in the same layout.
TS_AVX512 void scalePairRows(const Bf16* w, const Bf16* g, int pairs, std::size_t width, Bf16* dst)
{
    for (int k = 0; k < pairs; ++k) {
        const __m512 gk = alternating(floatOf(g[2 * k]), floatOf(g[2 * k + 1]));
        for (std::size_t l = 0; l < width; l += kLanes)
            _mm256_store_si256(reinterpret_cast<__m256i*>(dst + k * width + l), toBf16(_mm512_mul_ps(loadChannels(w + k * width + l, 0xFFFF), gk)));
    }
}

}  // namespace

bool PointwiseConv::available() { return hasAvx512(); }

bool PointwiseConv::availableBf16() { return hasAvx512Bf16(); }

bool PointwiseConv::supports(int cout) { return kernelsFor<BlockFn>(cout, false).block != nullptr; }

PointwiseConv::PointwiseConv(int cin, int cout, const float* weight, const float* bias, bool addToOutput, Storage storage)
    : cin_(cin), cout_(cout), storage_(storage)
{
    const bool bf16 = storage == Storage::Bf16;
    if (!supports(cout) || cin < 1 || (bf16 && !supportsBf16(cin, cout)))
        throw std::invalid_argument("PointwiseConv: no " + std::string(bf16 ? "bf16 " : "") + "kernel for " + std::to_string(cin) + " -> " +
                                    std::to_string(cout) + " channels");
    if (bf16 && !availableBf16()) throw std::invalid_argument("PointwiseConv: the bf16 storage needs AVX-512 BF16, which this CPU lacks");
    const Kernels<BlockFn> k = kernelsFor<BlockFn>(cout, addToOutput);
    group_ = k.group;
    vectors_ = k.vectors;
    groups_ = k.groups;
    if (bf16) {
        const Kernels<BlockFnBf16> kb = kernelsFor<BlockFnBf16>(cout, addToOutput);
        blockBf16_ = kb.block;
        oneBf16_ = kb.one;
        halfBf16_ = kb.half;
    } else {
        block_ = k.block;
        one_ = k.one;
        half_ = k.half;
    }
    const int width = vectors_ * kLanes;
    const std::size_t values = static_cast<std::size_t>(cin) * width;
    // bf16: cin · width bfloat16 in the fp32 layout's first half (the pairs).
    packed_ = std::make_unique<PackedWeights>(bf16 ? values / 2 : values, static_cast<std::size_t>(width));
    auto* pairs = reinterpret_cast<Bf16*>(packed_->weights.data);
    for (int l = 0; l < width; ++l) {
        const int o = l % cout;
        for (int i = 0; i < cin; ++i) {
            const float w = weight[static_cast<std::size_t>(o) * cin + i];
            if (bf16) {
                // Pair row i / 2, lane l, element i % 2.
                pairs[(static_cast<std::size_t>(i / 2) * width + l) * 2 + i % 2] = nearestBf16(w);
            } else {
                packed_->weights.data[static_cast<std::size_t>(i) * width + l] = w;
            }
        }
        packed_->bias.data[l] = bias[o];
    }
}

PointwiseConv::~PointwiseConv() = default;
PointwiseConv::PointwiseConv(PointwiseConv&&) noexcept = default;
PointwiseConv& PointwiseConv::operator=(PointwiseConv&&) noexcept = default;

void PointwiseConv::requireStorage(Storage s) const
{
    if (storage_ != s) throw std::logic_error("PointwiseConv: run on maps of the other storage");
}

void PointwiseConv::run(const float* src, float* dst, std::size_t pixels) const
{
    requireStorage(Storage::Fp32);
    runWith(src, dst, pixels, packed_->weights.data, block_, one_, half_);
}

void PointwiseConv::run(const Bf16* src, Bf16* dst, std::size_t pixels) const
{
    requireStorage(Storage::Bf16);
    runWith(src, dst, pixels, packed_->weights.data, blockBf16_, oneBf16_, halfBf16_);
}

std::size_t PointwiseConv::gatedScratchFloats() const { return static_cast<std::size_t>(cin_) * vectors_ * kLanes; }

void PointwiseConv::runGated(const float* src, float* dst, int images, std::size_t pixelsPerImage, const float* gates, float* scratch) const
{
    requireStorage(Storage::Fp32);
    const std::size_t width = static_cast<std::size_t>(vectors_) * kLanes;
    for (int i = 0; i < images; ++i) {
        const float* g = gates + static_cast<std::size_t>(i) * cin_;
        scaleRows(packed_->weights.data, g, cin_, width, scratch);
        runWith(src + i * pixelsPerImage * cin_, dst + i * pixelsPerImage * cout_, pixelsPerImage, scratch, block_, one_, half_);
    }
}

void PointwiseConv::runGated(const Bf16* src, Bf16* dst, int images, std::size_t pixelsPerImage, const Bf16* gates, float* scratch) const
{
    requireStorage(Storage::Bf16);
    const std::size_t width = static_cast<std::size_t>(vectors_) * kLanes * 2;   // a pair row
    for (int i = 0; i < images; ++i) {
        const Bf16* g = gates + static_cast<std::size_t>(i) * cin_;
        scalePairRows(reinterpret_cast<const Bf16*>(packed_->weights.data), g, cin_ / 2, width, reinterpret_cast<Bf16*>(scratch));
        runWith(src + i * pixelsPerImage * cin_, dst + i * pixelsPerImage * cout_, pixelsPerImage, scratch, blockBf16_, oneBf16_, halfBf16_);
    }
}

template <class T, class Fn>
void PointwiseConv::runWith(const T* src, T* dst, std::size_t pixels, const float* w, Fn block, Fn one, Fn half) const
{
    const std::size_t groups = pixels / group_, blockGroups = static_cast<std::size_t>(groups_), blockPixels = blockGroups * group_;
    const float* b = packed_->bias.data;
    std::size_t p = 0;
    for (std::size_t g = 0; g + blockGroups <= groups; g += blockGroups, p += blockPixels) block(src + p * cin_, cin_, w, b, dst + p * cout_);
    for (; p + group_ <= pixels; p += group_) one(src + p * cin_, cin_, w, b, dst + p * cout_);
    if (p < pixels) half(src + p * cin_, cin_, w, b, dst + p * cout_);
}

}  // namespace tinyscope::onednn
