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
// measured faster than oneDNN's), any in. Only where the CPU has AVX-512 (available()). bf16 plans
// run it too (Storage::Bf16: bfloat16 maps, vdpbf16ps on input channel pairs, where the CPU has
// AVX-512 BF16 and cin is even). Torch- and dnnl-free.
#include "nn/onednn/Bf16.h"

#include <cstddef>
#include <memory>

namespace tinyscope::onednn {

struct PackedWeights;   // OneDnnCommon.h

class PointwiseConv {
public:
    // fp32: float maps and weights. bf16: bfloat16 maps, the weights rounded to bfloat16 (as
    // oneDNN's reorder rounds them for its bf16 convs), float32 bias and sums, each output rounded
    // to bfloat16 once (after the residual add).
    enum class Storage { Fp32, Bf16 };

    static bool available();           // this CPU runs the kernel (AVX-512 F, BW, VL)
    static bool availableBf16();       // ... and its bf16 storage (AVX-512 BF16 as well)
    static bool supports(int cout);    // an output channel count the kernel has code for
    static bool supportsBf16(int cin, int cout) { return supports(cout) && cin % 2 == 0; }

    // `weight`: cout × cin (PyTorch's 1×1 layout), `bias`: cout. `addToOutput`: dst += conv + bias
    // (the residual add, in place on the block's input), else dst = conv + bias. No activation (a
    // projection is linear). Throws std::invalid_argument unless supports(cout) and cin ≥ 1 (bf16:
    // supportsBf16(cin, cout) and availableBf16()).
    PointwiseConv(int cin, int cout, const float* weight, const float* bias, bool addToOutput, Storage storage = Storage::Fp32);
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
    // Storage::Bf16 (on a CPU with availableBf16()): the same on bfloat16 maps; runGated's gates are
    // bfloat16 too (the bf16 plan's SE gates), each g · w rounded to bfloat16 once per image (the
    // unfused pair rounds x · g to bfloat16 in the stored map instead).
    void run(const Bf16* src, Bf16* dst, std::size_t pixels) const;
    void runGated(const Bf16* src, Bf16* dst, int images, std::size_t pixelsPerImage, const Bf16* gates, float* scratch) const;

    // One register block's code (PointwiseConv.cpp): in, cin, weights, bias, out.
    using BlockFn = void (*)(const float*, int, const float*, const float*, float*);
    using BlockFnBf16 = void (*)(const Bf16*, int, const float*, const float*, Bf16*);

private:
    template <class T, class Fn>
    void runWith(const T* src, T* dst, std::size_t pixels, const float* weights, Fn block, Fn one, Fn half) const;
    void requireStorage(Storage s) const;
    int cin_, cout_, group_, vectors_;   // pixels per group (1 or 2) and the group's 16-lane vectors
    Storage storage_;
    // The count's code, chosen once: blocks of groups_ groups, single groups, a lone last pixel.
    int groups_ = 0;
    BlockFn block_ = nullptr, one_ = nullptr, half_ = nullptr;
    BlockFnBf16 blockBf16_ = nullptr, oneBf16_ = nullptr, halfBf16_ = nullptr;
    // fp32: weights [cin][vectors][16]; bf16: [cin / 2][vectors][16][2] bfloat16 (a channel pair per
    // lane). Bias [vectors][16]. Lane l of vector v is channel (16v + l) mod cout.
    std::unique_ptr<PackedWeights> packed_;
};

}  // namespace tinyscope::onednn
