#pragma once
// A network as plain data: layers in execution order, each with its inputs (earlier layers),
// its output shape and the attributes every reader needs. The training-graph lowering, the
// memory ledger, the LibTorch module builder and the CLI tables all read this one struct.
// Batch 1 is implied; every tensor is C×H×W (a vector of C features is C×1×1, tokens of a
// transformer are C×H×W with H·W tokens).
#include "io/JsonFile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct Shape3 {
    int c = 0, h = 1, w = 1;
    std::int64_t elems() const { return static_cast<std::int64_t>(c) * h * w; }
    bool operator==(const Shape3& o) const { return c == o.c && h == o.h && w == o.w; }
    bool operator!=(const Shape3& o) const { return !(*this == o); }
};

enum class LayerKind {
    Conv,               // conv or linear (a linear is a 1×1 conv on C×1×1, or per token), + BN + activation
    Add,                // residual add of inputs[0] (skip) and inputs[1] (branch), + activation
    GlobalAvgPool,      // mean over H, W
    ChannelScale,       // squeeze-excite gate: inputs[0] (C×1×1 gate) × inputs[1] (C×H×W features)
    MaxPool,            // kernel/stride/padding as for a conv
    LayerNorm,          // over channels, per position (2·C params)
    Attention,          // multi-head scaled dot-product attention: inputs q, k, v (C×H×W tokens)
    PositionEmbedding,  // adds a learned C×H×W tensor
    BiasActivation,     // adds a learned per-channel bias, then the activation (CCT's gelu_bias + GELU)
    SequencePool,       // softmax over tokens of inputs[1] (1×H×W logits) weights inputs[0] -> C×1×1
};

enum class Activation { None, ReLU, ReLU6, HSigmoid, GELU };

enum class LossKind { CrossEntropy, MeanSquaredError };

struct Layer {
    LayerKind kind = LayerKind::Conv;
    std::string name;        // module path of the PyTorch model ("blocks.3.dw", "fc")
    std::string role;        // stem, pw1, dw, pw2, se_reduce, se_expand, conv, shortcut, pw, fc, classifier, ...
    std::string ir_prefix;   // parameter-name prefix in the training graph ("v3_conv_1", "v15", "v3_qadd")
    int block = -1;          // block index (-1 outside blocks)
    std::vector<int> inputs; // producing layers; -1 = the network input
    Shape3 in;               // shape of inputs[0]
    Shape3 out;

    // Conv (and MaxPool for kernel/stride/padding).
    int cin = 0, cout = 0;
    int kh = 1, kw = 1;
    int stride_h = 1, stride_w = 1;
    int pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
    int groups = 1;
    bool bias = false;       // conv bias (tiny-training models: true; conv+BN models: false)
    bool bn = false;         // followed by BatchNorm (folded into the conv for int8)
    bool linear = false;     // a torch Linear (classifier, MLP), lowered as a 1×1 conv
    Activation act = Activation::None;

    int heads = 0;           // Attention
    int conv_index = -1;     // position among all convs (the tiny-training index), -1 for other kinds

    bool isConv() const { return kind == LayerKind::Conv; }
    bool depthwise() const { return kind == LayerKind::Conv && groups > 1 && groups == cin && groups == cout; }
    std::int64_t weightElems() const;   // conv weight elements (O·I/g·kh·kw)
    std::int64_t params() const;        // trainable parameters (weight, bias, BN γ/β, LN, embeddings)
    std::int64_t macs() const;          // H_out·W_out·C_out·(C_in/g)·kh·kw for convs, 0 otherwise
};

struct Network {
    std::string name;
    std::string description;
    std::string source;       // where the exact definition comes from
    Shape3 input;
    int num_outputs = 0;      // classes (or reconstruction size for the autoencoder)
    LossKind loss = LossKind::CrossEntropy;
    std::vector<Layer> layers;

    // Layer indices of the convs in index order (tiny-training `manual_weight_idx` numbering);
    // the last one is the head ("classifier"), the others are the backbone.
    const std::vector<int>& convLayers() const { return convs_; }
    int numConvs() const { return static_cast<int>(convs_.size()); }
    int numBackboneConvs() const { return numConvs() - 1; }
    const Layer& conv(int convIndex) const { return layers[static_cast<std::size_t>(convs_[static_cast<std::size_t>(convIndex)])]; }
    const Layer& layer(int i) const { return layers[static_cast<std::size_t>(i)]; }
    const Layer& head() const { return conv(numConvs() - 1); }
    Shape3 shapeOf(int layerIndex) const { return layerIndex < 0 ? input : layer(layerIndex).out; }

    std::int64_t params() const;
    std::int64_t macs() const;
    // MCUNet's peak-activation rule (int8, bytes): max over convs of in + out elements, plus the
    // block input for a depthwise conv inside a residual block; squeeze-excite convs are ignored
    // as the lab does. Equals tiny-training's table and the cost model for design-space subnets.
    std::int64_t peakActivationBytes(int* atConv = nullptr) const;

    // Checks the layer wiring and shapes and numbers the convs; builders call it once.
    void finalize();

    Json toJson() const;   // name, params, macs, peak_activation_bytes, layers[]

private:
    std::vector<int> convs_;
};

const char* layerKindName(LayerKind k);
const char* activationName(Activation a);

}  // namespace tinyscope
