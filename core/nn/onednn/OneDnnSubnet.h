#pragma once
// A subnet on oneDNN: its folded weights and one OneDnnPlan per batch size, built on first use and
// kept (an evaluation needs two: its batch and the remainder). Threads follow LibTorch's setting
// on the calling thread (torchThreads(), nn/TorchRuntime.h), so both engines use the same count;
// with T > 1 threads a batch of n ≥ T images is split into T parts run side by side, each on one
// thread of a ShardPool with its own plan (images in parallel, not layers: no barrier per layer,
// which on this project's busy 2-core machines cost more than the layers of a small subnet;
// docs/ONEDNN.md). Every plan is single-threaded (OneDnnPlan::run).
#include "nn/onednn/OneDnnPlan.h"

#include <cstddef>
#include <map>
#include <memory>

namespace at {
class Tensor;
}

namespace tinyscope {

class ShardPool;
class Subnet;

class OneDnnSubnet {
public:
    // Folds a copy when not folded.
    explicit OneDnnSubnet(const Subnet& subnet, OneDnnDtype dtype = OneDnnDtype::Fp32,
                          OneDnnDepthwise depthwise = OneDnnDepthwise::OursFused, OneDnnProjection projection = OneDnnProjection::Ours);
    explicit OneDnnSubnet(FoldedSubnet net, OneDnnDtype dtype = OneDnnDtype::Fp32,
                          OneDnnDepthwise depthwise = OneDnnDepthwise::OursFused, OneDnnProjection projection = OneDnnProjection::Ours);
    ~OneDnnSubnet();

    // The plan for `batch` images (worker `part` of a split batch), built once; throws OneDnnRefused.
    OneDnnPlan& prepare(int batch, int part = 0);
    // Builds every plan a forward of `n` images on `threads` threads uses; throws OneDnnRefused.
    void prepareFor(int n, int threads);
    // Images a plan runs at once: a part of a batch runs in micro-batches of this many, so that one
    // activation buffer stays within a few MB (cache) however large the batch (docs/ONEDNN.md).
    int microBatch() const;
    // Two stages (OneDnnPlan.h): chunks of tailBatch() images run as one plan whose head takes
    // microBatch() images at a time and whose tail — the blocks from stages().tailFrom on — takes the
    // whole chunk; tailBatch() 0 where it does not pay (small tails: docs/ONEDNN.md, "Two stages").
    int tailBatch() const { return tailBatch_; }
    OneDnnStages stages() const { return stages_; }
    // `n` images, NCHW float at resolution(), into n × classes() logits.
    void forward(const float* images, int n, float* logits);
    at::Tensor forward(const at::Tensor& images);   // n × 3 × r × r -> n × classes

    std::size_t plans() const { return plans_.size(); }   // built so far, over all (batch, part)
    int classes() const { return net_.classes; }
    int resolution() const { return net_.layout.resolution; }

private:
    void runPart(const float* images, int n, float* logits, int part);   // on the calling thread
    static int microBatchOf(const FoldedSubnet& net, OneDnnDtype dtype);
    void chooseStages();
    template <class F>
    void eachRun(int n, F&& f) const;   // f(first image, count) for each plan run of a part of n

    FoldedSubnet net_;
    OneDnnDtype dtype_;
    OneDnnDepthwise depthwise_;
    OneDnnProjection projection_;
    int microBatch_;   // microBatchOf(net_, dtype_), once
    int tailBatch_ = 0;
    OneDnnStages stages_;
    std::map<std::pair<int, int>, std::unique_ptr<OneDnnPlan>> plans_;   // (batch, part)
    std::unique_ptr<ShardPool> pool_;   // the workers of a split batch, made on first use
};

}  // namespace tinyscope
