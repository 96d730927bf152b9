#include "nn/onednn/Int8StemConv.h"

#include "nn/onednn/Avx512.h"

#include <cstring>
#include <type_traits>
#include <stdexcept>
#include <string>

namespace tinyscope::onednn {

namespace {

constexpr int kLanes = 16;
constexpr int kMostVectors = 4;   // output channels ≤ 64
constexpr int kMostInputs = 4;
constexpr std::size_t kSlack = 64;   // bytes after the tile: a row's last dword may read up to 3 past it

// acc += the 4 u8 · s8 products of each lane (vpdpbusd). Written in asm: from the intrinsic GCC 12
// copied every accumulator to another register and back on each pass of the tap loop (two moves
// per vpdpbusd, measured 1.3× slower).
TS_AVX512_VNNI inline void dpbusd(__m512i& acc, __m512i u8, __m512i s8) { asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8)); }

// One register block: P adjacent output pixels of one row × V channel vectors. `in` is the tile
// position of the block's first pixel's first tap; its dword t (of `taps`: kernel row by kernel
// row) is at in + offsets[t], pixel p's `step` · p further. Every dword is broadcast and summed
// into the P × V accumulators by vpdpbusd.
template <int V, int P, typename Out>
TS_AVX512_VNNI void pixelBlock(const std::uint8_t* in, const std::size_t* offsets, int taps, int step, const std::int32_t* w, Out* out, int cout,
                               __mmask16 lastMask, const Int8StemConv::Requant* q)
{
    __m512i acc[P][V];
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_si512();
    for (int t = 0; t < taps; ++t, w += V * kLanes) {
        const std::uint8_t* r = in + offsets[t];
        __m512i wv[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_si512(w + v * kLanes);
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
            std::int32_t bytes;
            std::memcpy(&bytes, r + p * step, sizeof bytes);
            const __m512i x = _mm512_set1_epi32(bytes);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) dpbusd(acc[p][v], x, wv[v]);
        }
    }
    if constexpr (std::is_same_v<Out, std::int32_t>) {
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
            std::int32_t* o = out + static_cast<std::size_t>(p) * cout;
#pragma GCC unroll 4
            for (int v = 0; v < V - 1; ++v) _mm512_storeu_si512(o + v * kLanes, acc[p][v]);
            _mm512_mask_storeu_epi32(o + (V - 1) * kLanes, lastMask, acc[p][V - 1]);
        }
    } else {
        // Requant's formula, 16 channels at a time; clamp8(y) + 128 narrowed in a register and
        // stored as 16 bytes (vpmovdb's own masked stores are slow on some CPUs), the last vector's
        // under the mask.
        const __m512i zy = _mm512_set1_epi32(q->zy), lo = _mm512_set1_epi32(-128), hi = _mm512_set1_epi32(127), up = _mm512_set1_epi32(128);
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
            std::uint8_t* o = out + static_cast<std::size_t>(p) * cout;
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) {
                const __m512i x = _mm512_add_epi32(acc[p][v], _mm512_load_si512(q->comp + v * kLanes));
                const __m512 f = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(x), _mm512_load_ps(q->bias + v * kLanes)),
                                               _mm512_load_ps(q->scale + v * kLanes));
                const __m512i y = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(f), zy), lo), hi), up);
                const __m128i bytes = _mm512_cvtepi32_epi8(y);
                if (v < V - 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(o + v * kLanes), bytes);
                else _mm_mask_storeu_epi8(o + v * kLanes, lastMask, bytes);
            }
        }
    }
}

// One output row: blocks of P pixels (P · V accumulators and V weight vectors in registers), then
// single pixels.
template <int V, typename Out>
TS_AVX512_VNNI void outputRow(const std::uint8_t* in, int ho, const std::size_t* offsets, int taps, int step, const std::int32_t* w, Out* out,
                              int cout, __mmask16 lastMask, const Int8StemConv::Requant* q)
{
    // One vector: 16 pixels, 16 independent vpdpbusd chains (1.11× the stem of 8 on 3 → 16
    // channels at 96 and 160 px, alternating turns in one process).
    constexpr int P = V == 1 ? 16 : V == 2 ? 6 : 4;
    int x = 0;
    for (; x + P <= ho; x += P)
        pixelBlock<V, P>(in + static_cast<std::size_t>(x) * step, offsets, taps, step, w, out + static_cast<std::size_t>(x) * cout, cout, lastMask, q);
    for (; x < ho; ++x)
        pixelBlock<V, 1>(in + static_cast<std::size_t>(x) * step, offsets, taps, step, w, out + static_cast<std::size_t>(x) * cout, cout, lastMask, q);
}

}  // namespace

bool Int8StemConv::available() { return hasAvx512Vnni(); }

bool Int8StemConv::supports(int cin, int cout, int kernel, int stride)
{
    return cin >= 1 && cin <= kMostInputs && cout >= 1 && cout <= kMostVectors * kLanes && kernel >= 1 && kernel <= 7 && kernel % 2 == 1 &&
           (stride == 1 || stride == 2);
}

Int8StemConv::Int8StemConv(int cin, int cout, int h, int kernel, int stride, int pad, const std::int32_t* weight, std::uint8_t border)
    : cin_(cin), cout_(cout), h_(h), k_(kernel), s_(stride), pad_(pad), ho_(0), vectors_((cout + kLanes - 1) / kLanes),
      dwords_((kernel * cin + 3) / 4), border_(border)
{
    if (!supports(cin, cout, kernel, stride) || pad < 0 || pad >= kernel || h + 2 * pad < kernel)
        throw std::invalid_argument("int8 stem conv: unsupported shape (" + std::to_string(cin) + " → " + std::to_string(cout) + ", kernel " +
                                    std::to_string(kernel) + ", stride " + std::to_string(stride) + ", pad " + std::to_string(pad) + ")");
    ho_ = (h + 2 * pad - kernel) / stride + 1;
    packed_.assign(static_cast<std::size_t>(k_) * dwords_ * vectors_ * kLanes, 0);
    for (int o = 0; o < cout; ++o)
        for (int c = 0; c < cin; ++c)
            for (int ky = 0; ky < k_; ++ky)
                for (int kx = 0; kx < k_; ++kx) {
                    const std::int32_t w = weight[((static_cast<std::size_t>(o) * cin + c) * k_ + ky) * k_ + kx];
                    if (w < -128 || w > 127) throw std::invalid_argument("int8 stem conv: a weight outside int8: " + std::to_string(w));
                    const int j = kx * cin + c;   // the byte of the kernel row
                    const std::size_t lane = ((static_cast<std::size_t>(ky) * dwords_ + j / 4) * vectors_ + o / kLanes) * kLanes + o % kLanes;
                    auto* bytes = reinterpret_cast<std::int8_t*>(&packed_[lane]);
                    bytes[j % 4] = static_cast<std::int8_t>(w);
                }
}

std::size_t Int8StemConv::scratchBytes() const
{
    const std::size_t side = static_cast<std::size_t>(h_ + 2 * pad_);
    return side * side * cin_ + kSlack;
}

template <typename Out>
void Int8StemConv::runAs(const std::uint8_t* src, Out* dst, int n, std::uint8_t* scratch) const
{
    const int side = h_ + 2 * pad_;
    const std::size_t rowBytes = static_cast<std::size_t>(side) * cin_, inRow = static_cast<std::size_t>(h_) * cin_,
                      edge = static_cast<std::size_t>(pad_) * cin_;
    const std::size_t outPlane = static_cast<std::size_t>(ho_) * ho_ * cout_;
    const __mmask16 lastMask = tailMask(static_cast<std::size_t>(cout_ - (vectors_ - 1) * kLanes));
    const int step = s_ * cin_, taps = k_ * dwords_;
    std::size_t offsets[7 * 7];   // dword t of a pixel's taps: kernel row t / dwords, bytes 4 · (t % dwords) on
    for (int t = 0; t < taps; ++t) offsets[t] = static_cast<std::size_t>(t / dwords_) * rowBytes + 4 * static_cast<std::size_t>(t % dwords_);
    // The border (rows above and below, columns left and right) and the slack: the same every image.
    std::memset(scratch, border_, rowBytes * pad_);
    std::memset(scratch + rowBytes * (pad_ + h_), border_, rowBytes * pad_ + kSlack);
    for (int y = 0; y < h_; ++y) {
        std::uint8_t* row = scratch + rowBytes * (pad_ + y);
        std::memset(row, border_, edge);
        std::memset(row + edge + inRow, border_, edge);
    }
    for (int b = 0; b < n; ++b) {
        const std::uint8_t* image = src + static_cast<std::size_t>(b) * h_ * inRow;
        for (int y = 0; y < h_; ++y) std::memcpy(scratch + rowBytes * (pad_ + y) + edge, image + y * inRow, inRow);
        for (int oy = 0; oy < ho_; ++oy) {
            const std::uint8_t* in = scratch + static_cast<std::size_t>(oy) * s_ * rowBytes;
            Out* out = dst + b * outPlane + static_cast<std::size_t>(oy) * ho_ * cout_;
            switch (vectors_) {
            case 1: outputRow<1>(in, ho_, offsets, taps, step, packed_.data(), out, cout_, lastMask, requant_.get()); break;
            case 2: outputRow<2>(in, ho_, offsets, taps, step, packed_.data(), out, cout_, lastMask, requant_.get()); break;
            case 3: outputRow<3>(in, ho_, offsets, taps, step, packed_.data(), out, cout_, lastMask, requant_.get()); break;
            default: outputRow<4>(in, ho_, offsets, taps, step, packed_.data(), out, cout_, lastMask, requant_.get()); break;
            }
        }
    }
}

void Int8StemConv::run(const std::uint8_t* src, std::int32_t* dst, int n, std::uint8_t* scratch) const { runAs(src, dst, n, scratch); }

void Int8StemConv::run(const std::uint8_t* src, std::uint8_t* dst, int n, std::uint8_t* scratch) const
{
    if (!requant_) throw std::logic_error("int8 stem conv: uint8 output without a requantisation (setRequant)");
    runAs(src, dst, n, scratch);
}

void Int8StemConv::setRequant(const std::int32_t* comp, const float* bias, const float* scale, std::int32_t zy)
{
    requant_ = std::make_unique<Requant>();
    for (int o = 0; o < cout_; ++o) {
        requant_->comp[o] = comp ? comp[o] : 0;
        requant_->bias[o] = bias[o];
        requant_->scale[o] = scale[o];
    }
    requant_->zy = zy;
}

}  // namespace tinyscope::onednn
