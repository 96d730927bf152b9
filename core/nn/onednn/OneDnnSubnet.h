#pragma once
// A subnet on oneDNN: its folded weights and one OneDnnPlan per batch size, built on first use and
// kept (an evaluation needs two: its batch and the remainder). Threads follow LibTorch's setting
// on the calling thread (torchThreads(), nn/TorchRuntime.h), so both engines run on the same count.
#include "nn/onednn/OneDnnPlan.h"

#include <map>
#include <memory>

namespace at {
class Tensor;
}

namespace tinyscope {

class Subnet;

class OneDnnSubnet {
public:
    explicit OneDnnSubnet(const Subnet& subnet);   // folds a copy when the subnet is not folded
    explicit OneDnnSubnet(FoldedSubnet net);

    // The plan for `batch` images, built once; throws OneDnnRefused.
    OneDnnPlan& prepare(int batch);
    // `n` images, NCHW float at resolution(), into n × classes() logits.
    void forward(const float* images, int n, float* logits);
    at::Tensor forward(const at::Tensor& images);   // n × 3 × r × r -> n × classes

    int classes() const { return net_.classes; }
    int resolution() const { return net_.layout.resolution; }

private:
    FoldedSubnet net_;
    std::map<int, std::unique_ptr<OneDnnPlan>> plans_;
};

}  // namespace tinyscope
