#include "nn/onednn/StemConv.h"

#include "nn/onednn/Avx512.h"
#include "nn/onednn/DepthwiseConv.h"
#include "nn/onednn/OneDnnCommon.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace tinyscope::onednn {

namespace {

constexpr int kLanes = 16;
constexpr int kMostVectors = 4;   // output channels ≤ 64
constexpr int kMostInputs = 4;

// One register block: P output pixels of one row × V channel vectors, a K × K kernel. `in` points
// at the tile position of the block's first pixel's first tap (channel 0); taps in order channel,
// kernel row, kernel column, then the bias — one FMA chain per output value.
// Out: float, or Bf16 (bf16 plans: rounded to the nearest bfloat16 as it is stored).
template <typename Out, int K, int V, int P>
TS_AVX512 void pixelBlock(const float* in, int cin, int s, std::size_t plane, int rowStride, const float* w, const float* bias,
                          Out* out, int cout, __mmask16 lastMask)
{
    __m512 acc[P][V];
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_ps();
    for (int c = 0; c < cin; ++c) {
        const float* ic = in + c * plane;
        for (int kh = 0; kh < K; ++kh, w += K * V * kLanes) {
            const float* r = ic + kh * rowStride;
#pragma GCC unroll 7
            for (int kw = 0; kw < K; ++kw) {
                __m512 wv[V];
#pragma GCC unroll 4
                for (int v = 0; v < V; ++v) wv[v] = _mm512_load_ps(w + (kw * V + v) * kLanes);
#pragma GCC unroll 16
                for (int p = 0; p < P; ++p) {
                    const __m512 x = _mm512_set1_ps(r[p * s + kw]);
#pragma GCC unroll 4
                    for (int v = 0; v < V; ++v) acc[p][v] = _mm512_fmadd_ps(x, wv[v], acc[p][v]);
                }
            }
        }
    }
    const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(6.f);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
            const __m512 y = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(acc[p][v], _mm512_load_ps(bias + v * kLanes)), lo), hi);
            if constexpr (std::is_same_v<Out, float>)
                _mm512_mask_storeu_ps(out + p * cout + v * kLanes, v == V - 1 ? lastMask : 0xFFFF, y);
            else
                _mm256_mask_storeu_epi16(out + p * cout + v * kLanes, v == V - 1 ? lastMask : 0xFFFF, toBf16(y));
        }
}

template <typename Out>
using BlockFn = void (*)(const float*, int, int, std::size_t, int, const float*, const float*, Out*, int, __mmask16);
constexpr int kMostPixels = 16;
template <typename Out>
using Blocks = std::array<BlockFn<Out>, kMostPixels>;   // [pixels − 1]

// Pixels per register block: at most 16 (one vector: 16 independent FMA chains; 1.08–1.10× the
// stem of 8, measured on 3 → 16 channels at 96 and 160 px; 24 gained nothing), else at most 32
// accumulators and 8 pixels.
constexpr int pixelsFor(int v) { return v == 1 ? 16 : v <= 2 ? 8 : 4; }

// The blocks of 1 … pixelsFor(V) pixels (null beyond).
template <typename Out, int K, int V, std::size_t... I>
constexpr Blocks<Out> blocksOf(std::index_sequence<I...>)
{
    return {&pixelBlock<Out, K, V, static_cast<int>(I) + 1>...};
}

template <typename Out, int K>
constexpr std::array<Blocks<Out>, kMostVectors> vectorsOf()
{
    return {blocksOf<Out, K, 1>(std::make_index_sequence<pixelsFor(1)>()), blocksOf<Out, K, 2>(std::make_index_sequence<pixelsFor(2)>()),
            blocksOf<Out, K, 3>(std::make_index_sequence<pixelsFor(3)>()), blocksOf<Out, K, 4>(std::make_index_sequence<pixelsFor(4)>())};
}

// [kernel / 2][vectors − 1][pixels − 1].
template <typename Out>
using Tables = std::array<std::array<Blocks<Out>, kMostVectors>, 4>;
const Tables<float> kFloatBlocks = {vectorsOf<float, 1>(), vectorsOf<float, 3>(), vectorsOf<float, 5>(), vectorsOf<float, 7>()};
const Tables<Bf16> kBf16Blocks = {vectorsOf<Bf16, 1>(), vectorsOf<Bf16, 3>(), vectorsOf<Bf16, 5>(), vectorsOf<Bf16, 7>()};
const Tables<float>& tablesFor(const float*) { return kFloatBlocks; }
const Tables<Bf16>& tablesFor(const Bf16*) { return kBf16Blocks; }

// `count` floats copied, each rounded to the nearest bfloat16 (bf16 plans: what their input
// reorder stores).
TS_AVX512 void copyRoundedToBf16(const float* src, float* dst, int count)
{
    for (int i = 0; i < count; i += kLanes) {
        const __mmask16 m = tailMask(static_cast<std::size_t>(count - i));
        _mm512_mask_storeu_ps(dst + i, m, roundedToBf16(_mm512_maskz_loadu_ps(m, src + i)));
    }
}

}  // namespace

bool StemConv::available() { return hasAvx512(); }

bool StemConv::supports(int cin, int cout, int kernel, int stride)
{
    return cin >= 1 && cin <= kMostInputs && cout >= 1 && cout <= kMostVectors * kLanes && kernel >= 1 && kernel <= 7 && kernel % 2 == 1 &&
           (stride == 1 || stride == 2);
}

StemConv::StemConv(int cin, int cout, int h, int kernel, int stride, int pad, const float* weight, const float* bias)
    : cin_(cin), cout_(cout), h_(h), k_(kernel), s_(stride), pad_(pad), ho_((h + 2 * pad - kernel) / stride + 1),
      vectors_((cout + kLanes - 1) / kLanes)
{
    if (!supports(cin, cout, kernel, stride) || h < 1 || pad < 0 || ho_ < 1)
        throw std::invalid_argument("StemConv: no kernel for " + std::to_string(cin) + " -> " + std::to_string(cout) + " channels, " +
                                    std::to_string(kernel) + "x" + std::to_string(kernel) + " stride " + std::to_string(stride));
    const int taps = cin * kernel * kernel, width = vectors_ * kLanes;
    packed_ = std::make_unique<PackedWeights>(static_cast<std::size_t>(taps) * width, static_cast<std::size_t>(width));
    for (int o = 0; o < cout; ++o) {
        for (int t = 0; t < taps; ++t) packed_->weights.data[static_cast<std::size_t>(t) * width + o] = weight[static_cast<std::size_t>(o) * taps + t];
        packed_->bias.data[o] = bias[o];
    }
}

StemConv::~StemConv() = default;
StemConv::StemConv(StemConv&&) noexcept = default;
StemConv& StemConv::operator=(StemConv&&) noexcept = default;

std::size_t StemConv::scratchFloats() const
{
    const std::size_t hp = static_cast<std::size_t>(h_) + 2 * pad_;
    return static_cast<std::size_t>(cin_) * hp * hp;
}

void StemConv::run(const float* src, float* dst, int n, float* scratch) const { runAs(src, dst, n, scratch); }

void StemConv::run(const float* src, Bf16* dst, int n, float* scratch) const { runAs(src, dst, n, scratch); }

template <typename Out>
void StemConv::runAs(const float* src, Out* dst, int n, float* scratch) const
{
    constexpr bool bf16 = std::is_same_v<Out, Bf16>;
    const int hp = h_ + 2 * pad_;   // the tile's side
    const std::size_t plane = static_cast<std::size_t>(hp) * hp;
    const auto& fns = tablesFor(dst)[k_ / 2][vectors_ - 1];
    const int most = pixelsFor(vectors_), nb = (ho_ + most - 1) / most;
    const __mmask16 lastMask = tailMask(static_cast<std::size_t>(cout_ - (vectors_ - 1) * kLanes));
    // The border (pad rows above and below, pad columns beside each image row) once per run; the
    // interior is overwritten by every image.
    for (int c = 0; c < cin_; ++c) {
        float* t = scratch + c * plane;
        std::memset(t, 0, static_cast<std::size_t>(pad_) * hp * sizeof(float));
        std::memset(t + static_cast<std::size_t>(pad_ + h_) * hp, 0, static_cast<std::size_t>(pad_) * hp * sizeof(float));
        for (int y = pad_; y < pad_ + h_; ++y) {
            std::memset(t + static_cast<std::size_t>(y) * hp, 0, static_cast<std::size_t>(pad_) * sizeof(float));
            std::memset(t + static_cast<std::size_t>(y) * hp + pad_ + h_, 0, static_cast<std::size_t>(pad_) * sizeof(float));
        }
    }
    for (int img = 0; img < n; ++img) {
        const float* image = src + static_cast<std::size_t>(img) * cin_ * h_ * h_;
        for (int c = 0; c < cin_; ++c)
            for (int y = 0; y < h_; ++y) {
                float* t = scratch + c * plane + static_cast<std::size_t>(y + pad_) * hp + pad_;
                const float* row = image + (static_cast<std::size_t>(c) * h_ + y) * h_;
                if constexpr (bf16)
                    copyRoundedToBf16(row, t, h_);
                else
                    std::memcpy(t, row, static_cast<std::size_t>(h_) * sizeof(float));
            }
        Out* out = dst + static_cast<std::size_t>(img) * ho_ * ho_ * cout_;
        for (int oh = 0; oh < ho_; ++oh) {
            const float* row = scratch + static_cast<std::size_t>(oh) * s_ * hp;
            int ow = 0;
            for (int b = 0; b < nb; ++b) {
                const int width = ho_ / nb + (b < ho_ % nb ? 1 : 0);
                fns[width - 1](row + ow * s_, cin_, s_, plane, hp, packed_->weights.data, packed_->bias.data,
                               out + (static_cast<std::size_t>(oh) * ho_ + ow) * cout_, cout_, lastMask);
                ow += width;
            }
        }
    }
}

}  // namespace tinyscope::onednn
