#include "zoo/Network.h"

#include "Error.h"

#include <map>

namespace tinyscope {

const char* layerKindName(LayerKind k)
{
    switch (k) {
    case LayerKind::Conv: return "conv";
    case LayerKind::Add: return "add";
    case LayerKind::GlobalAvgPool: return "global_avg_pool";
    case LayerKind::ChannelScale: return "channel_scale";
    case LayerKind::MaxPool: return "max_pool";
    case LayerKind::LayerNorm: return "layer_norm";
    case LayerKind::Attention: return "attention";
    case LayerKind::PositionEmbedding: return "position_embedding";
    case LayerKind::BiasActivation: return "bias_activation";
    case LayerKind::SequencePool: return "sequence_pool";
    }
    return "?";
}

const char* activationName(Activation a)
{
    switch (a) {
    case Activation::None: return "linear";
    case Activation::ReLU: return "relu";
    case Activation::ReLU6: return "relu6";
    case Activation::HSigmoid: return "hsigmoid";
    case Activation::GELU: return "gelu";
    }
    return "?";
}

std::int64_t Layer::weightElems() const
{
    if (kind != LayerKind::Conv) return 0;
    return static_cast<std::int64_t>(cout) * (cin / groups) * kh * kw;
}

std::int64_t Layer::params() const
{
    switch (kind) {
    case LayerKind::Conv: return weightElems() + (bias ? cout : 0) + (bn ? 2LL * cout : 0);
    case LayerKind::LayerNorm: return 2LL * out.c;
    case LayerKind::PositionEmbedding: return out.elems();
    case LayerKind::BiasActivation: return out.c;
    default: return 0;
    }
}

std::int64_t Layer::macs() const
{
    if (kind != LayerKind::Conv) return 0;
    return static_cast<std::int64_t>(out.h) * out.w * weightElems();
}

std::int64_t Network::params() const
{
    std::int64_t p = 0;
    for (const Layer& l : layers) p += l.params();
    return p;
}

std::int64_t Network::macs() const
{
    std::int64_t m = 0;
    for (const Layer& l : layers) m += l.macs();
    return m;
}

std::int64_t Network::peakActivationBytes(int* atConv) const
{
    std::map<int, std::int64_t> skipOfBlock;   // residual blocks: elements of the block input
    for (const Layer& l : layers)
        if (l.kind == LayerKind::Add && l.block >= 0) skipOfBlock[l.block] = shapeOf(l.inputs[0]).elems();
    std::int64_t peak = -1;
    for (int ci = 0; ci < numConvs(); ++ci) {
        const Layer& l = conv(ci);
        if (l.role == "se_reduce" || l.role == "se_expand") continue;
        std::int64_t term = l.in.elems() + l.out.elems();
        if (l.role == "dw") {
            auto it = skipOfBlock.find(l.block);
            if (it != skipOfBlock.end()) term += it->second;
        }
        if (term > peak) {
            peak = term;
            if (atConv) *atConv = ci;
        }
    }
    return peak < 0 ? 0 : peak;
}

void Network::finalize()
{
    convs_.clear();
    auto bad = [&](std::size_t i, const std::string& why) {
        throw InputError("network " + name + ": layer " + std::to_string(i) + " (" + layers[i].name + "): " + why);
    };
    for (std::size_t i = 0; i < layers.size(); ++i) {
        Layer& l = layers[i];
        if (l.inputs.empty()) bad(i, "has no input");
        for (int in : l.inputs)
            if (in < -1 || in >= static_cast<int>(i)) bad(i, "input " + std::to_string(in) + " is not an earlier layer");
        if (shapeOf(l.inputs[0]) != l.in) bad(i, "input shape does not match its producer");
        if (l.kind == LayerKind::Conv) {
            if (l.cin != l.in.c) bad(i, "cin differs from the input channels");
            if (l.groups < 1 || l.cin % l.groups != 0 || l.cout % l.groups != 0) bad(i, "bad groups");
            if (l.stride_h < 1 || l.stride_w < 1 || l.kh < 1 || l.kw < 1) bad(i, "kernel and stride must be at least 1");
            const int ho = (l.in.h + l.pad_t + l.pad_b - l.kh) / l.stride_h + 1;
            const int wo = (l.in.w + l.pad_l + l.pad_r - l.kw) / l.stride_w + 1;
            if (l.out != Shape3{l.cout, ho, wo}) bad(i, "output shape does not follow from kernel, stride and padding");
            l.conv_index = static_cast<int>(convs_.size());
            convs_.push_back(static_cast<int>(i));
        } else {
            l.conv_index = -1;
        }
        if ((l.kind == LayerKind::Add || l.kind == LayerKind::ChannelScale || l.kind == LayerKind::SequencePool) &&
            l.inputs.size() != 2)
            bad(i, "needs two inputs");
        if (l.kind == LayerKind::Add && (shapeOf(l.inputs[0]) != shapeOf(l.inputs[1]) || l.out != l.in))
            bad(i, "adds tensors of different shapes");
    }
    if (convs_.empty()) throw InputError("network " + name + " has no conv or linear layer");
    const Layer& h = head();
    if (h.out.c != num_outputs) throw InputError("network " + name + ": the last conv/linear is not the head");
}

Json Network::toJson() const
{
    auto shape = [](const Shape3& s) { return Json::array({s.c, s.h, s.w}); };
    int peakAt = -1;
    Json j{{"name", name},
           {"description", description},
           {"source", source},
           {"input", shape(input)},
           {"num_outputs", num_outputs},
           {"loss", loss == LossKind::CrossEntropy ? "cross_entropy" : "mse"},
           {"params", params()},
           {"macs", macs()},
           {"peak_activation_bytes", peakActivationBytes(&peakAt)},
           {"peak_activation_at_conv", peakAt},
           {"n_convs", numConvs()},
           {"n_backbone_convs", numBackboneConvs()}};
    std::int64_t matmul = 0;
    for (const Layer& l : layers) {
        if (l.kind == LayerKind::Attention) matmul += 2LL * l.out.h * l.out.w * l.out.h * l.out.w * l.out.c;
        if (l.kind == LayerKind::SequencePool) matmul += l.out.c * l.in.h * l.in.w;
    }
    if (matmul) j["attention_macs"] = matmul;
    Json rows = Json::array();
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Layer& l = layers[i];
        Json r{{"layer", i},     {"name", l.name},        {"kind", layerKindName(l.kind)}, {"role", l.role},
               {"block", l.block}, {"inputs", l.inputs}, {"in", shape(l.in)},             {"out", shape(l.out)},
               {"params", l.params()}};
        if (l.kind == LayerKind::Conv) {
            r["index"] = l.conv_index;
            r["is_classifier"] = l.conv_index == numConvs() - 1;
            r["ir_prefix"] = l.ir_prefix;
            r["cin"] = l.cin;
            r["cout"] = l.cout;
            r["kernel"] = {l.kh, l.kw};
            r["stride"] = {l.stride_h, l.stride_w};
            r["padding"] = {l.pad_t, l.pad_l, l.pad_b, l.pad_r};
            r["groups"] = l.groups;
            r["depthwise"] = l.depthwise();
            r["bias"] = l.bias;
            r["bn"] = l.bn;
            r["linear"] = l.linear;
            r["activation"] = activationName(l.act);
            r["weight_elems"] = l.weightElems();
            r["macs"] = l.macs();
        } else if (l.kind == LayerKind::Add || l.kind == LayerKind::ChannelScale) {
            r["ir_prefix"] = l.ir_prefix;
            r["activation"] = activationName(l.act);
        }
        rows.push_back(std::move(r));
    }
    j["layers"] = std::move(rows);
    return j;
}

}  // namespace tinyscope
