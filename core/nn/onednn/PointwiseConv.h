#pragma once
// Our own 1×1 convolution for the fp32 oneDNN plans' projections to few channels (docs/ONEDNN.md,
// "Our projection kernel"): NHWC in and out, AVX-512, + bias, optionally added to what dst holds
// (the block's residual). oneDNN 2.6's 1×1 kernels give every pixel whole 16-lane vectors, so a
// projection to 24 or 40 channels computes 32 or 48 (25 and 17 % of its FMAs on padding); they ran
// at 54–66 % of the FP32 FMA peak on the largest VWW subnet, 14 % of its time. Here the output of a
// pair of pixels is one run of 2 · cout floats (NHWC is dense): 24 channels are three full vectors
// per pair, 40 five, the middle one holding half of each pixel. Per register block (up to 24
// accumulators: pixel groups × vectors) every input value is one broadcast used by the group's
// vectors, every weight vector one load used by every group. 24, 40, 48 or 80 channels out (those
// measured faster than oneDNN's), any in. Only where the CPU has AVX-512 (available()). Torch- and
// dnnl-free.
#include <cstddef>
#include <memory>

namespace tinyscope::onednn {

struct PackedWeights;   // OneDnnCommon.h

class PointwiseConv {
public:
    static bool available();           // this CPU runs the kernel (AVX-512 F, BW, VL)
    static bool supports(int cout);    // an output channel count the kernel has code for

    // `weight`: cout × cin (PyTorch's 1×1 layout), `bias`: cout. `addToOutput`: dst += conv + bias
    // (the residual add, in place on the block's input), else dst = conv + bias. No activation (a
    // projection is linear). Throws std::invalid_argument unless supports(cout) and cin ≥ 1.
    PointwiseConv(int cin, int cout, const float* weight, const float* bias, bool addToOutput);
    ~PointwiseConv();
    PointwiseConv(PointwiseConv&&) noexcept;
    PointwiseConv& operator=(PointwiseConv&&) noexcept;

    // `pixels` pixels (every image's, NHWC: pixels × cin, dense) into dst (pixels × cout, dense).
    // Single-threaded.
    void run(const float* src, float* dst, std::size_t pixels) const;
    // The projection of a squeeze-and-excitation block: input channel k of image i scaled by
    // gates[i · cin + k] first (the SE multiply), folded into the weights once per image — sums of
    // x · (g · w) for the unfused (x · g) · w, one rounding before the sum either way (g · w here,
    // x · g there) — so the gated map is never written. `images` × `pixelsPerImage` pixels; `scratch`: gatedScratchFloats()
    // floats, 64-byte aligned.
    void runGated(const float* src, float* dst, int images, std::size_t pixelsPerImage, const float* gates, float* scratch) const;
    std::size_t gatedScratchFloats() const;

    // One register block's code (PointwiseConv.cpp): in, cin, weights, bias, out.
    using BlockFn = void (*)(const float*, int, const float*, const float*, float*);

private:
    void runWith(const float* src, float* dst, std::size_t pixels, const float* weights) const;
    int cin_, cout_, group_, vectors_;   // pixels per group (1 or 2) and the group's 16-lane vectors
    // The count's code, chosen once: blocks of groups_ groups, single groups, a lone last pixel.
    int groups_ = 0;
    BlockFn block_ = nullptr, one_ = nullptr, half_ = nullptr;
    std::unique_ptr<PackedWeights> packed_;   // weights [cin][vectors][16], bias [vectors][16]: lane l of vector v is channel (16v + l) mod cout
};

}  // namespace tinyscope::onednn
