#pragma once
// The int8 plan's first convolution (the stem) on AVX-512 VNNI (docs/ONEDNN.md, "The SE passes and the stem").
// oneDNN 2.6's u8 × s8 convolution of a 3-channel input was the largest step of the smallest VWW
// subnet's int8 plan (19 % of its time at 96 px). Here each output pixel's K kernel rows are K · cin
// adjacent bytes of the NHWC input, read as dwords: every dword is broadcast and multiplied by a
// weight vector with vpdpbusd (4 u8 × 4 s8 summed into each int32 lane: 16 output channels), the
// bytes past a row's K · cin weighted 0. Per image the input is first copied into a tile bordered
// with `border` (the stored value of the conv's zero point), so every tap meets a value and the sums
// need one compensation per channel, not one per position. Exact: int32 sums of at most
// 7 · 7 · 4 products of 255 · 128, no saturation (vpdpbusd, unlike vpdpbusds, wraps — never reached).
// Torch- and dnnl-free.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tinyscope::onednn {

class Int8StemConv {
public:
    static bool available();   // this CPU runs the kernel (AVX-512 F, BW, VL and VNNI)
    // Up to 4 channels in, 64 out, odd kernels up to 7, stride 1 or 2.
    static bool supports(int cin, int cout, int kernel, int stride);

    // `weight`: cout × cin × kernel × kernel (OIHW) int8 values (std::invalid_argument naming one
    // outside int8, or an unsupported shape). Input h × h, output ho × ho with
    // ho = (h + 2·pad − kernel) / stride + 1.
    Int8StemConv(int cin, int cout, int h, int kernel, int stride, int pad, const std::int32_t* weight, std::uint8_t border);

    int outputSize() const { return ho_; }
    std::size_t scratchBytes() const;   // one image's bordered tile

    // n images of h × h × cin stored uint8 values (NHWC) into dst, n × ho × ho × cout int32 sums
    // Σ w · x over every tap of the bordered tile (NHWC). `scratch`: scratchBytes() bytes.
    // Single-threaded.
    void run(const std::uint8_t* src, std::int32_t* dst, int n, std::uint8_t* scratch) const;

    // The exact arithmetic's requantisation of every sum, as the int8 plan's (int8k::convExact):
    // sum + comp[o] in int32, converted to float (round to nearest even), + bias[o], × scale[o]
    // (two roundings, nothing fused), rounded to nearest even, + zy, clamped to int8. `comp` may
    // be null (zero).
    void setRequant(const std::int32_t* comp, const float* bias, const float* scale, std::int32_t zy);
    // As run() above, each sum requantised (setRequant first, else std::logic_error) and stored
    // as uint8 (+ 128): the int8 plan's uint8 storage, no int32 map in between.
    void run(const std::uint8_t* src, std::uint8_t* dst, int n, std::uint8_t* scratch) const;

    struct alignas(64) Requant {
        std::int32_t comp[64] = {};
        float bias[64] = {}, scale[64] = {};
        std::int32_t zy = 0;
    };

private:
    template <typename Out>
    void runAs(const std::uint8_t* src, Out* dst, int n, std::uint8_t* scratch) const;

    int cin_, cout_, h_, k_, s_, pad_, ho_, vectors_, dwords_;
    std::uint8_t border_;
    // [ky][dword][vector][16 lanes] int32: lane o's 4 bytes are w[o][c][ky][kx] for the row bytes
    // 4·dword .. 4·dword + 3 (byte j = kx · cin + c), 0 past the row or for o ≥ cout.
    std::vector<std::int32_t> packed_;
    std::unique_ptr<Requant> requant_;
};

}  // namespace tinyscope::onednn
