#pragma once
// Appends layers to a Network with their output shapes worked out, so that a model is written
// as the list of its layers (see ZooCatalog.cpp, SubnetNetwork.cpp).
#include "zoo/Network.h"

namespace tinyscope {

struct ConvSpec {
    std::string name, role, prefix;
    int block = -1;
    int cout = 0;
    int kh = 1, kw = 1;
    int stride_h = 1, stride_w = 1;
    static constexpr int kSame = -1;                      // (k-1)/2 on that side
    int pad_t = kSame, pad_l = kSame, pad_b = kSame, pad_r = kSame;
    int groups = 1;
    bool bias = false, bn = false, linear = false;
    Activation act = Activation::None;

    // A k×k conv with 'same' padding ((k−1)/2 per side).
    static ConvSpec of(std::string name, std::string role, std::string prefix, int block, int cout, int k = 1,
                       int stride = 1, int groups = 1, Activation act = Activation::None)
    {
        ConvSpec s;
        s.name = std::move(name);
        s.role = std::move(role);
        s.prefix = std::move(prefix);
        s.block = block;
        s.cout = cout;
        s.kh = s.kw = k;
        s.stride_h = s.stride_w = stride;
        s.groups = groups;
        s.act = act;
        return s;
    }
    ConvSpec& kernel(int k) { kh = kw = k; return *this; }
    ConvSpec& stride(int s) { stride_h = stride_w = s; return *this; }
    ConvSpec& pad(int p) { pad_t = pad_l = pad_b = pad_r = p; return *this; }
    ConvSpec& withBias() { bias = true; return *this; }
    ConvSpec& withBn() { bn = true; return *this; }
    ConvSpec& asLinear() { linear = bias = true; return *this; }   // a torch Linear (with bias)
};

class NetworkBuilder {
public:
    NetworkBuilder(std::string name, Shape3 input);

    int conv(int from, const ConvSpec& spec);
    int add(int skip, int branch, const std::string& name, const std::string& prefix, int block,
            Activation act = Activation::None);
    int globalAvgPool(int from, const std::string& name);
    int channelScale(int gate, int features, const std::string& name, const std::string& prefix, int block);
    int maxPool(int from, int kernel, int stride, int pad, const std::string& name);
    int layerNorm(int from, const std::string& name);
    int positionEmbedding(int from, const std::string& name);
    int biasActivation(int from, Activation act, const std::string& name);
    int attention(int q, int k, int v, int heads, const std::string& name);
    int sequencePool(int features, int logits, const std::string& name);

    Shape3 shape(int layer) const { return net_.shapeOf(layer); }
    Network finish(int numOutputs, LossKind loss, std::string description, std::string source);

private:
    int push(Layer l);
    Network net_;
};

}  // namespace tinyscope
