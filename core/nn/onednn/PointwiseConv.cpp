#include "nn/onednn/PointwiseConv.h"

#include "nn/onednn/Avx512.h"
#include "nn/onednn/OneDnnCommon.h"

#include <stdexcept>
#include <string>

namespace tinyscope::onednn {

namespace {

constexpr int kLanes = 16;
constexpr int kMostAccumulators = 24;   // + the group's weight vectors and three broadcasts: ≤ 32 registers

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
#pragma GCC unroll 24
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 5
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_load_ps(bias + v * kLanes);
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
#pragma GCC unroll 24
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 5
        for (int v = 0; v < V; ++v) {
            if (Half && v > S) continue;
            const __mmask16 mask = Half && v == S ? 0x00FF : 0xFFFF;
            float* o = out + (r * V + v) * kLanes;
            __m512 y = acc[r][v];
            if constexpr (Add) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, o));
            _mm512_mask_storeu_ps(o, mask, y);
        }
}

using BlockFn = PointwiseConv::BlockFn;

// A channel count's code: blocks of `groups` groups, single groups for the rest, a last lone pixel.
struct Kernels {
    int group = 0, vectors = 0, groups = 0;
    BlockFn block = nullptr, one = nullptr, half = nullptr;
};

template <int V, int G, bool Add>
constexpr Kernels kernelsOf()
{
    constexpr int R = kMostAccumulators / V;
    return {G, V, R, &groupBlock<V, G, R, Add, false>, &groupBlock<V, G, 1, Add, false>,
            G == 2 ? &groupBlock<V, G, 1, Add, true> : nullptr};
}

template <bool Add>
Kernels kernelsFor(int cout)
{
    // The counts measured faster than oneDNN's 1×1 conv on the VWW subnets (docs/ONEDNN.md, "Our
    // projection kernel"). 16 ran at parity (one broadcast load per FMA either way); 32 and 64 give
    // oneDNN no padding either and are left to it.
    switch (cout) {
    case 24: return kernelsOf<3, 2, Add>();
    case 40: return kernelsOf<5, 2, Add>();
    case 48: return kernelsOf<3, 1, Add>();
    case 80: return kernelsOf<5, 1, Add>();
    default: return {};
    }
}

Kernels kernelsFor(int cout, bool add) { return add ? kernelsFor<true>(cout) : kernelsFor<false>(cout); }

// dst[k][·] = w[k][·] · g[k] for `rows` rows of `width` floats (a multiple of 16, 64-byte aligned).
TS_AVX512 void scaleRows(const float* w, const float* g, int rows, std::size_t width, float* dst)
{
    for (int k = 0; k < rows; ++k) {
        const __m512 gk = _mm512_set1_ps(g[k]);
        for (std::size_t l = 0; l < width; l += kLanes) _mm512_store_ps(dst + k * width + l, _mm512_mul_ps(_mm512_load_ps(w + k * width + l), gk));
    }
}

}  // namespace

bool PointwiseConv::available() { return hasAvx512(); }

bool PointwiseConv::supports(int cout) { return kernelsFor(cout, false).block != nullptr; }

PointwiseConv::PointwiseConv(int cin, int cout, const float* weight, const float* bias, bool addToOutput)
    : cin_(cin), cout_(cout)
{
    if (!supports(cout) || cin < 1)
        throw std::invalid_argument("PointwiseConv: no kernel for " + std::to_string(cin) + " -> " + std::to_string(cout) + " channels");
    const Kernels k = kernelsFor(cout, addToOutput);
    group_ = k.group;
    vectors_ = k.vectors;
    groups_ = k.groups;
    block_ = k.block;
    one_ = k.one;
    half_ = k.half;
    const int width = vectors_ * kLanes;
    packed_ = std::make_unique<PackedWeights>(static_cast<std::size_t>(cin) * width, static_cast<std::size_t>(width));
    for (int l = 0; l < width; ++l) {
        const int o = l % cout;
        for (int i = 0; i < cin; ++i) packed_->weights.data[static_cast<std::size_t>(i) * width + l] = weight[static_cast<std::size_t>(o) * cin + i];
        packed_->bias.data[l] = bias[o];
    }
}

PointwiseConv::~PointwiseConv() = default;
PointwiseConv::PointwiseConv(PointwiseConv&&) noexcept = default;
PointwiseConv& PointwiseConv::operator=(PointwiseConv&&) noexcept = default;

void PointwiseConv::run(const float* src, float* dst, std::size_t pixels) const { runWith(src, dst, pixels, packed_->weights.data); }

std::size_t PointwiseConv::gatedScratchFloats() const { return static_cast<std::size_t>(cin_) * vectors_ * kLanes; }

void PointwiseConv::runGated(const float* src, float* dst, int images, std::size_t pixelsPerImage, const float* gates, float* scratch) const
{
    const std::size_t width = static_cast<std::size_t>(vectors_) * kLanes;
    for (int i = 0; i < images; ++i) {
        const float* g = gates + static_cast<std::size_t>(i) * cin_;
        scaleRows(packed_->weights.data, g, cin_, width, scratch);
        runWith(src + i * pixelsPerImage * cin_, dst + i * pixelsPerImage * cout_, pixelsPerImage, scratch);
    }
}

void PointwiseConv::runWith(const float* src, float* dst, std::size_t pixels, const float* w) const
{
    const std::size_t groups = pixels / group_, blockGroups = static_cast<std::size_t>(groups_), blockPixels = blockGroups * group_;
    const float* b = packed_->bias.data;
    std::size_t p = 0;
    for (std::size_t g = 0; g + blockGroups <= groups; g += blockGroups, p += blockPixels) block_(src + p * cin_, cin_, w, b, dst + p * cout_);
    for (; p + group_ <= pixels; p += group_) one_(src + p * cin_, cin_, w, b, dst + p * cout_);
    if (p < pixels) half_(src + p * cin_, cin_, w, b, dst + p * cout_);
}

}  // namespace tinyscope::onednn
