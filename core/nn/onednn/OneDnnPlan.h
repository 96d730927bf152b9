#pragma once
// One extracted subnet as oneDNN primitives for one batch size, fp32 (or bf16), activations NHWC: built once,
// run for every batch of that size (docs/ONEDNN.md).
//  * one primitive per layer: conv + folded-BN bias + ReLU6 (eltwise_clip 0..6 post-op) as one;
//    the residual add as a sum post-op of the block's last conv, which writes into the block's
//    input; SE as global average pooling, two inner products (ReLU6; h-sigmoid as clip -3..3 and
//    linear x/6 + 1/2 post-ops) and a broadcast multiply in place; global average pooling and the
//    classifier (inner product) at the end;
//  * weights reordered once into the layout each primitive prefers (format_tag::any);
//  * kernels that overhang small maps cropped as forwardNet crops them (same result, less work);
//  * the blocks' depthwise convs (+ bias + ReLU6) on our AVX-512 kernel (DepthwiseConv.h) where the
//    CPU has it, oneDNN's elsewhere (OneDnnDepthwise); the block's 1×1 expansion
//    (inverted bottleneck + bias + ReLU6) fused into our kernel, which computes its tiles from the
//    block's input (the expanded map is never stored); the first conv on our AVX-512 stem kernel
//    (StemConv.h; bf16 plans too, rounding as oneDNN's reorders would), straight from the NCHW
//    input, where the CPU has it — elsewhere the input is reordered into NHWC for oneDNN's conv;
//  * three activation buffers, the SE vectors and one scratchpad for all primitives, allocated
//    here; running a batch allocates nothing;
//  * optionally two stages (OneDnnStages): the layers before block `tailFrom` run on chunks of
//    `headBatch` images (their maps are large: a chunk stays in the caches), each chunk's output
//    copied into the tail's input, then the rest on the whole batch at once (their maps are small
//    and their weights large: one pass over the weights serves every image). Three more buffers.
//  * projections to few channels on our AVX-512 1×1 kernel (PointwiseConv.h; bf16 plans with
//    AVX-512 BF16, from an even channel count), the residual added as it stores, an SE block's
//    multiply folded into its weights per image; an SE block's pooling summed by our depthwise
//    kernel as it stores;
//  * oneDNN's 1×1 convs (no padding, stride 1) over the batch's pixels as one matrix product (the
//    NHWC maps described as one image of n·h·w × 1 pixels, onednn::batchAsPixels); on 1-pixel maps
//    of a plan of several images the block's expansion is such a conv, not fused into our kernel;
// Torch- and dnnl-free header.
#include "nn/onednn/FoldedSubnet.h"

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace tinyscope {

// The data type of activations and weights. Bf16: bfloat16 activations and weights, f32 biases,
// post-ops computed in f32 and the logits in f32 (AVX-512 BF16 / AMX kernels where the CPU has them).
enum class OneDnnDtype { Fp32, Bf16 };

// Who runs the blocks' depthwise convolutions: our AVX-512 kernel (nn/onednn/DepthwiseConv.h; where
// the CPU has AVX-512 F/BW/VL, kernel sizes 1–7, strides 1–2) with the block's 1×1 expansion fused
// into it (`OursFused`; in bf16 plans where the CPU has AVX-512 BF16), our kernel after
// oneDNN's expansion (`Ours`), or oneDNN's (`OneDnn`). CPUs without AVX-512 always use oneDNN's.
// `Ours` and `OneDnn` are kept for the benchmarks' comparisons and the equality tests.
enum class OneDnnDepthwise { OursFused, Ours, OneDnn };

// Who runs the blocks' projections (their last 1×1 conv, + the residual add): our AVX-512 kernel
// (nn/onednn/PointwiseConv.h; to 24, 40, 48 or 80 channels, where the CPU has AVX-512 F/BW/VL, and
// in bf16 plans AVX-512 BF16 and an even input count) or oneDNN's convolution (every other count,
// and `OneDnn`, kept for the benchmark's comparison and the equality tests).
enum class OneDnnProjection { Ours, OneDnn };

// Two stages in one plan (above): `headBatch` 0 (or not dividing the batch, or `tailFrom` not
// inside the blocks) means one stage. OneDnnSubnet chooses them (docs/ONEDNN.md, "Two stages").
struct OneDnnStages {
    int headBatch = 0;
    std::size_t tailFrom = 0;   // the first block of the tail
};

// oneDNN has no implementation for a layer (or refused its shape): the message names the layer.
// Callers fall back to LibTorch; never shown as a crash.
class OneDnnRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class OneDnnPlan {
public:
    // Throws OneDnnRefused.
    OneDnnPlan(const FoldedSubnet& net, int batch, OneDnnDtype dtype = OneDnnDtype::Fp32,
               OneDnnDepthwise depthwise = OneDnnDepthwise::OursFused, OneDnnStages stages = {},
               OneDnnProjection projection = OneDnnProjection::Ours);
    ~OneDnnPlan();
    OneDnnPlan(const OneDnnPlan&) = delete;
    OneDnnPlan& operator=(const OneDnnPlan&) = delete;

    int batch() const;
    int resolution() const;
    int classes() const;
    std::size_t primitives() const;     // steps run per batch: oneDNN primitives and our kernels
    std::size_t ownDepthwise() const;   // of which depthwise convolutions run by our kernel
    std::size_t fusedExpansions() const;   // of those, with the block's expansion fused in (one step for both)
    std::size_t ownProjections() const;   // blocks' projections run by our kernel (PointwiseConv.h)
    // SE steps that run inside our kernels: poolings summed by the depthwise kernel, multiplies
    // folded into the projection's weights (fp32 plans).
    std::size_t fusedSeSteps() const;
    bool ownStem() const;               // the first conv on our kernel, from the NCHW input (StemConv.h)
    int headBatch() const;              // images per head chunk; batch() with one stage
    std::size_t bufferBytes() const;    // activations + SE vectors + scratchpad, allocated once

    // `batch` images, NCHW float (batch × 3 × resolution²), into `logits` (batch × classes,
    // row-major), on the calling thread alone. A plan is single-threaded by construction: oneDNN
    // (OpenMP runtime) fixes a primitive's thread count when it is created, from the creating
    // thread's omp_get_max_threads(), and forces a team of that size at every execution whatever
    // the caller's setting; the constructor therefore builds every primitive with one thread.
    // OneDnnSubnet runs plans side by side for more (docs/ONEDNN.md).
    void run(const float* images, float* logits);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tinyscope
