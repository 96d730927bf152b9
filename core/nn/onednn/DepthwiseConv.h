#pragma once
// Our own depthwise convolution for the oneDNN plans (docs/ONEDNN.md, "Our depthwise kernel"):
// NHWC in and out, AVX-512, + bias, optionally ReLU6. Per image and 16-channel block the input is
// copied once into a zero-bordered tile (so no tap tests an edge), then each output row is computed
// in blocks of up to 8 pixels held in registers: for every kernel row the K weight vectors are loaded
// once and every input vector of the row is loaded once and used by every output of the block it
// meets (7 FMAs per load at stride 1). oneDNN 2.6's brdgmm_dw reached 25–57 % of the FP32 FMA peak
// on the 7×7 layers of the largest VWW subnet; they were 37 % of its time at 26 % of its MACs.
// Kernel sizes 1, 3, 5, 7; strides 1, 2; any channel count (the last block masked). Only where the
// CPU has AVX-512 (available()); the plans keep oneDNN's kernel elsewhere. Also the int8 plan's
// depthwise sums (uint8 in, int32 out; float in, float out), exact as integers, and bf16 plans' (bfloat16
// in and out, float32 sums). Torch- and dnnl-free.
#include "nn/onednn/Bf16.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tinyscope::onednn {

struct PackedWeights;   // OneDnnCommon.h
struct Buffer;          // OneDnnCommon.h

// The 1×1 convolution (+ bias + ReLU6) that expands a block's input to the depthwise conv's channels
// (MBConv's inverted bottleneck), fused into the depthwise conv (DepthwiseConv::runExpanded):
// `weight` channels × cin (PyTorch's 1×1 layout), `bias` channels.
struct Expansion {
    int cin;
    const float* weight;
    const float* bias;
};

// The int8 plan's expansion (uint8 storage, the exact arithmetic), fused the same way
// (DepthwiseConv::runExpanded on uint8): a 1×1 convolution of int8 weights on stored values x + 128,
// its int32 sums Σ w · (x − zx) requantised as int8k::convExact (float(sum) + bias, × scale, rounded
// to nearest even, + zy), clamped to int8 like the truncation after it, then minus the depthwise
// conv's zero point: Σ w · (y − zdw) of the depthwise conv needs no compensation for its padding.
struct Int8Expansion {
    int cin;
    const std::int32_t* weight;   // channels × cin, each within int8
    const std::int32_t* comp;     // channels: (−128 − zx) · Σ_i w, so Σ w · stored + comp = Σ w · (x − zx)
    const float* bias;            // channels (the int32 bias as float, as the plan's requantisation)
    const float* scale;           // channels
    std::int32_t zy;              // the expansion's output zero point
    std::int32_t depthwiseZero;   // the depthwise conv's input zero point
};

class DepthwiseConv {
public:
    // This CPU runs the kernel (AVX-512 F, BW, VL).
    static bool available();
    // A kernel size and stride the kernel has code for.
    static bool supports(int kernel, int stride);
    // This CPU runs runExpanded's bf16 overload (AVX-512 BF16 as well).
    static bool bf16ExpansionAvailable();
    // This CPU runs runExpanded's uint8 overload (AVX-512 VNNI as well).
    static bool int8ExpansionAvailable();

    // `weight`: channels × kernel × kernel (PyTorch's depthwise layout, one plane per channel);
    // `bias`: channels (null: none). Input h × h, output ho × ho with ho = (h + 2·pad − kernel) / stride + 1.
    // `expansion`: the 1×1 conv before it, for runExpanded (null: none).
    DepthwiseConv(int channels, int h, int kernel, int stride, int pad, const float* weight, const float* bias, bool relu6,
                  const Expansion* expansion = nullptr);
    ~DepthwiseConv();
    DepthwiseConv(DepthwiseConv&&) noexcept;
    DepthwiseConv& operator=(DepthwiseConv&&) noexcept;

    int outputSize() const { return ho_; }
    // Floats of scratch run() needs (one zero-bordered tile, 64-byte aligned by the caller).
    std::size_t scratchFloats() const;

    // n images, NHWC (n × h × h × channels) into dst (n × ho × ho × channels). `scratch` holds
    // scratchFloats() floats, 64-byte aligned. Single-threaded. `means` (n × channels, or null):
    // each output channel's mean over the image as well, summed as the outputs are stored (the
    // global average pooling of a squeeze-and-excitation block, without reading the map again).
    void run(const float* src, float* dst, int n, float* scratch, float* means = nullptr) const;
    // bf16 plans: bfloat16 in and out, float32 taps and sums (as oneDNN's bf16 kernels: f32
    // accumulation), the output rounded to nearest even. `means`: as run's, of the stored (rounded)
    // outputs, summed in float32 and rounded to bfloat16.
    void run(const Bf16* src, Bf16* dst, int n, float* scratch, Bf16* means = nullptr) const;
    // The int8 plan's uint8 storage: uint8 images in, the int32 sums out (no ReLU6; integer
    // weights and a zero or integer bias). Every partial sum is an integer below 255 · Σ|w|, exact in
    // float32 while that stays below 2^24 (the caller checks).
    void run(const std::uint8_t* src, std::int32_t* dst, int n, float* scratch) const;
    // The expansion and the depthwise conv in one: n images of the expansion's input (NHWC, n × h ×
    // h × cin) into dst (n × ho × ho × channels); the expanded map is never stored, each tile is
    // computed from src (the 1×1 sums of a pixel's 16 channels in one vector, input channel by input
    // channel, + bias, ReLU6) where run() copies it. Needs the constructor's expansion. `means`: as run's.
    void runExpanded(const float* src, float* dst, int n, float* scratch, float* means = nullptr) const;
    bool expands() const { return expansion_ != nullptr; }
    // bf16 plans: bfloat16 input (NHWC, n × h × h × cin), the expansion's sums with AVX-512 BF16
    // (vdpbf16ps, two input channels per step: channel 2k + 1's product added, then 2k's), + bias,
    // ReLU6, each expanded value rounded to bfloat16 (as a bf16 expansion conv would store it), then
    // the bf16 depthwise conv of run(const Bf16*, …). The caller rounds both layers' weights to
    // bfloat16, as oneDNN's reorder does. `means`: as run(const Bf16*, …)'s. Needs expandsBf16().
    void runExpanded(const Bf16* src, Bf16* dst, int n, float* scratch, Bf16* means = nullptr) const;
    // An expansion from an even channel count, on a CPU with AVX-512 BF16 (bf16ExpansionAvailable()).
    bool expandsBf16() const;
    // The int8 plan (uint8 storage): n images of stored values x + 128 (NHWC, n × h × h × cin) into
    // the depthwise conv's int32 sums Σ w · (y − zdw) (dst, n × ho × ho × channels; no bias, no
    // ReLU6), y the expansion's requantised int8 output (Int8Expansion). The expansion's sums are
    // exact int32 (vpdpbusd: four uint8 × int8 products per step, no saturation); the depthwise
    // sums are integers below 255 · Σ|w|, exact in float32 while that is below 2^24 (the caller
    // checks). Needs the int8 constructor and int8ExpansionAvailable().
    void runExpanded(const std::uint8_t* src, std::int32_t* dst, int n, float* scratch) const;
    bool expandsInt8() const { return int8Expansion_ != nullptr; }
    // The int8 plan's fused pair: weights and zero point of the depthwise conv as the other
    // constructor's (integers, no bias, no ReLU6) and its int8 expansion.
    // Throws std::invalid_argument unless int8ExpansionFitsInt32.
    DepthwiseConv(int channels, int h, int kernel, int stride, int pad, const float* weight, const Int8Expansion& expansion);
    // Every reachable requantised product (float(sum) + bias) · scale of the expansion's `channels`
    // stays below 2^30 in magnitude, so the kernel's float rounding equals the integer conversion.
    static bool int8ExpansionFitsInt32(int channels, const Int8Expansion& expansion);

private:
    template <typename In, typename Out>
    void runAs(const In* src, Out* dst, int n, float* scratch, Out* means = nullptr) const;
    // The convolution with the tile interiors of `group` channel blocks at a time (1 or 2; fewer for
    // the last) filled by fill(img, first block, count, tiles: count tiles of tileFloats() each).
    // `means`: float and bfloat16 output only (null otherwise).
    template <typename Out, typename Fill>
    void runWith(Out* dst, int n, float* scratch, int group, Fill&& fill, Out* means = nullptr) const;
    std::size_t tileFloats() const;   // one zero-bordered tile

    int c_, h_, k_, s_, pad_, ho_, blocks_;
    bool relu6_;
    std::unique_ptr<PackedWeights> packed_;   // weights [block][kh][kw][16], bias [block][16], zero-padded
    int expansionCin_ = 0, expansionGroup_ = 1;   // channel blocks per expansion pass (tiles)
    std::unique_ptr<PackedWeights> expansion_;   // weights [block][cin][16], bias [block][16], zero-padded
    std::unique_ptr<Buffer> expansionPairs_;     // bf16: weights [block][cin / 2][16][2] as bfloat16 (even cin)
    // int8: weights [block][⌈cin / 4⌉][16][4] as int8 (zero past cin), then comp (int32), bias,
    // scale per [block][16]; zy and the depthwise zero point.
    std::unique_ptr<Buffer> int8Expansion_;
    std::int32_t int8Zy_ = 0, int8DepthwiseZero_ = 0;
    void setExpansionGroup();
};

}  // namespace tinyscope::onednn
