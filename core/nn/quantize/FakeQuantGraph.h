#pragma once
// The forward half of a training graph (ops [0, forward_ops): the int8 ops and the loss) on
// LibTorch tensors, for a batch: the int8 ops evaluated in float32 on integer values with
// rounding as a straight-through estimator (tiny-training's QuantizedConv2dDiff semantics), the
// clamp's gradient masked by autograd, the loss as the graph computes it, averaged over the batch
// (a batch of one is the graph's loss). Used by fakeQuantAutograd (the reference the compiled
// backward graph is checked against) and by the fine-tuning simulator (nn/finetune), so the
// simulator's forward is the graph's forward. Includes torch: for nn/ translation units only.
#include "graph/TrainingGraph.h"

#include <torch/torch.h>

#include <set>
#include <utility>
#include <vector>

namespace tinyscope {

class FakeQuantGraph {
public:
    // `dropped`: (op, input slot) pairs whose gradient is detached (the reference compiler's
    // quirks, FakeQuantSemantics::Reference); `rawWeightInput`: the conv's weight sees the raw
    // input (zero point ignored) as the reference compiler computes its weight gradient.
    explicit FakeQuantGraph(const TrainingGraph& g, std::set<std::pair<int, int>> dropped = {}, bool rawWeightInput = false);

    const TrainingGraph& graph() const { return g_; }

    // values[t]: the tensor of every parameter and constant of the graph, by tensor index (the
    // input and the label are given to run). Parameters keep the graph's shape (no batch).
    // input: [N, C, H, W] int8 values as float; label: [N, K] one-hot (or the target for MSE).
    // Returns the values of ops [0, forward_ops) by output tensor when `keep`, else only
    // the logits (the tensor cast to float before the loss) and the loss.
    struct Output {
        torch::Tensor loss;     // scalar: the batch mean of the graph's per-sample loss
        torch::Tensor logits;   // [N, K] float (the int8 logits' values), undefined for MSE
        std::vector<torch::Tensor> values;   // by tensor index when keep, else empty
    };
    Output run(std::vector<torch::Tensor> values, const torch::Tensor& input, const torch::Tensor& label, bool keep = false) const;

    // A parameter's values in the graph's shape (a scalar parameter as [1]).
    static torch::Tensor parameterTensor(const std::vector<float>& v, const TensorShape& shape);

private:
    const TrainingGraph& g_;
    std::set<std::pair<int, int>> dropped_;
    bool rawWeightInput_;
    int logits_ = -1;   // the Cast before the loss
};

}  // namespace tinyscope
