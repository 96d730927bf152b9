#pragma once
// The model the fine-tuning simulator trains: a quantized network's forward exactly as the int8
// training graph computes it (FakeQuantGraph over lowerForward(net): integer conv on x − z_x,
// + bias, × effective scale, round, + z_y, clamp), batched, with the parameters a sparse-update
// scheme updates as float32 tensors in their integer units (int8 weights, int32 biases, kept
// unrounded between steps as tiny-training's simulation keeps them). Backward is autograd through
// the straight-through rounding and the clamp mask, which is the graph's backward rule
// (tests/test_autodiff.cpp checks the compiled graph against the same forward).
//
// One SGD step (tiny-training's "sgd_scale" when QAS is on, issue 20):
//   bias    b ← b − lr · g_b · QAS_b[o],   QAS_b = 1 / (s_eff[o] · s_y)²
//   weight  w ← w − lr · g_w · QAS_w[o],   QAS_w = 1 / (s_eff[o] · s_y / s_x)²
// on the updated channels only (the first k input channels of a weight; of a depthwise weight,
// the first k channels), QAS factors as TinyEngine computes them (tinyengine/QasFactors.h).
// Includes torch: nn/ translation units only.
#include "graph/Autodiff.h"
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "nn/quantize/FakeQuantGraph.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

struct FineTuneParameter {
    std::string name;        // "v9_conv_0_weight"
    int tensor = -1;         // graph tensor
    int conv = -1;           // conv index
    bool bias = false;
    int k = 0;               // weights: updated channels
    torch::Tensor value;     // float32, requires_grad, integer units
    torch::Tensor qas;       // broadcastable per-output-channel factor
    torch::Tensor mask;      // weights with k below the full count: 1 on the updated channels
    std::int64_t elements = 0;   // the elements the step updates
};

class FineTuneModel {
public:
    // Throws InputError when `params` lacks what the graph or QAS needs (names the key).
    // `mode`: Correct simulates the faithful graph; Reference the graph MIT's compiler builds (its
    // dropped gradient contributions, the weight gradient on the raw input, the compiler's channel
    // counts), i.e. what an export in the reference form runs on the device.
    FineTuneModel(Network net, QuantizedParams params, const ResolvedScheme& scheme, AutodiffMode mode = AutodiffMode::Correct);

    const Network& network() const { return net_; }
    const TrainingGraph& graph() const { return *g_; }
    const std::vector<FineTuneParameter>& parameters() const { return trainable_; }
    int classes() const { return net_.num_outputs; }

    // Normalised float images [N, C, H, W] → the int8 input's values: clamp(round(x / s_x) + z_x).
    torch::Tensor quantizeInput(const torch::Tensor& images) const;
    // One SGD step on a batch of quantized inputs; returns the batch's mean loss.
    double step(const torch::Tensor& input, const std::vector<int>& labels, double lr, bool qas);
    // The int8 logits' values [N, K] (no gradient).
    torch::Tensor logits(const torch::Tensor& input) const;

    // The current parameters, rounded to the stored types (int8 weights clamped, int32 biases), into
    // a copy of the params the model started from: what a device would hold.
    QuantizedParams quantizedParams() const;
    // Trained values by name (float, integer units): checkpoints.
    std::vector<std::pair<std::string, std::vector<float>>> values() const;
    void setValues(const std::string& name, const std::vector<float>& v);   // InputError on a size mismatch

private:
    Network net_;
    QuantizedParams params_;
    std::unique_ptr<TrainingGraph> g_;
    std::unique_ptr<FakeQuantGraph> fq_;
    std::vector<torch::Tensor> values_;   // by graph tensor
    std::vector<FineTuneParameter> trainable_;
    double in_scale_ = 1.0;
    double in_zero_ = 0.0;
};

// A new classifier for `classes` classes in place of the model's head (transfer learning): the
// float weights drawn as PyTorch's Linear initialises them (uniform ±1/√C_in, seeded), quantized
// per output channel (s_w = max|w| / 127), bias 0; the head keeps its input scale and zero points;
// its output scale s_y is `outputScale` (0: the model's), so its effective scale is s_x · s_w / s_y.
// The graph's loss is the cross-entropy of the int8 logits' values, i.e. of the float logits at
// temperature s_y: s_y = 1 makes it the float cross-entropy tiny-training's classifier trains with
// (docs/FINETUNING.md). `net` changes when the class count does. Throws InputError when the head's
// scales are missing.
void replaceClassifier(Network& net, QuantizedParams& params, int classes, std::uint64_t seed, double outputScale = 1.0);

}  // namespace tinyscope
