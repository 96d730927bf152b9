#pragma once
// Our own first convolution (the stem) for the fp32 and bf16 oneDNN plans (docs/ONEDNN.md, "Our stem conv"):
// reads the caller's NCHW images as they are — no reorder into NHWC first — and writes NHWC, + bias
// + ReLU6, on AVX-512. oneDNN 2.6 runs an NCHW-input convolution with an NHWC output only on its
// reference kernel (30–300× slower, measured), so the plans reordered the input (8.6 µs of the
// smallest VWW subnet's 170 µs at 96 px) and then ran the conv (17.3 µs, 51 % of the FP32 peak).
// Per image the input is copied into a zero-bordered NCHW tile (no tap tests an edge); each output
// row is computed in register blocks of pixels × 16-channel vectors: every tap is a broadcast input
// value times a weight vector. Any channel count up to 64 out (the last vector masked), a few in,
// odd kernels up to 7, stride 1 or 2. Only where the CPU has AVX-512 (available()). Torch- and
// dnnl-free.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace tinyscope::onednn {

struct PackedWeights;   // OneDnnCommon.h
enum class Bf16 : std::uint16_t;   // Bf16.h

class StemConv {
public:
    static bool available();   // this CPU runs the kernel (AVX-512 F, BW, VL)
    static bool supports(int cin, int cout, int kernel, int stride);

    // `weight`: cout × cin × kernel × kernel (OIHW), `bias`: cout. Input h × h, output ho × ho with
    // ho = (h + 2·pad − kernel) / stride + 1.
    StemConv(int cin, int cout, int h, int kernel, int stride, int pad, const float* weight, const float* bias);
    ~StemConv();
    StemConv(StemConv&&) noexcept;
    StemConv& operator=(StemConv&&) noexcept;

    int outputSize() const { return ho_; }
    std::size_t scratchFloats() const;   // one image's zero-bordered tile

    // n images, NCHW (n × cin × h × h), into dst NHWC (n × ho × ho × cout), ReLU6 applied.
    // `scratch`: scratchFloats() floats, 64-byte aligned. Single-threaded.
    void run(const float* src, float* dst, int n, float* scratch) const;
    // bf16 plans: each input value rounded to the nearest bfloat16 first (as their input reorder
    // stores it), float32 sums, the outputs rounded to bfloat16 (as oneDNN's bf16 conv with f32
    // accumulation). The caller rounds the weights to bfloat16.
    void run(const float* src, Bf16* dst, int n, float* scratch) const;

private:
    template <typename Out>
    void runAs(const float* src, Out* dst, int n, float* scratch) const;

    int cin_, cout_, h_, k_, s_, pad_, ho_, vectors_;
    std::unique_ptr<PackedWeights> packed_;   // weights [cin][kh][kw][vectors × 16], bias [vectors × 16], zero-padded
};

}  // namespace tinyscope::onednn
