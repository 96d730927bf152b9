#include "zoo/NetworkBuilder.h"

#include "Error.h"

namespace tinyscope {

namespace {

constexpr int kMaxGeometry = 1 << 12;   // kernel, stride and padding beyond this are not a tiny network

// Refuses what would divide by zero or give an empty output, naming the layer.
void checkWindow(const std::string& net, const std::string& layer, const Shape3& in, int kh, int kw, int sh, int sw,
                 int pt, int pl, int pb, int pr)
{
    auto bad = [&](const std::string& why) { throw InputError("network " + net + ": layer " + layer + ": " + why); };
    if (kh < 1 || kw < 1 || kh > kMaxGeometry || kw > kMaxGeometry)
        bad("kernel " + std::to_string(kh) + "x" + std::to_string(kw) + " (expected 1.." + std::to_string(kMaxGeometry) + ")");
    if (sh < 1 || sw < 1 || sh > kMaxGeometry || sw > kMaxGeometry)
        bad("stride " + std::to_string(sh) + "x" + std::to_string(sw) + " (expected 1.." + std::to_string(kMaxGeometry) + ")");
    for (int p : {pt, pl, pb, pr})
        if (p < 0 || p > kMaxGeometry) bad("padding " + std::to_string(p) + " (expected 0.." + std::to_string(kMaxGeometry) + ")");
    if (in.h + pt + pb < kh || in.w + pl + pr < kw)
        bad("a " + std::to_string(kh) + "x" + std::to_string(kw) + " window does not fit the padded " + std::to_string(in.h) + "x" +
            std::to_string(in.w) + " input");
}

}  // namespace

NetworkBuilder::NetworkBuilder(std::string name, Shape3 input)
{
    net_.name = std::move(name);
    net_.input = input;
}

int NetworkBuilder::push(Layer l)
{
    net_.layers.push_back(std::move(l));
    return static_cast<int>(net_.layers.size()) - 1;
}

int NetworkBuilder::conv(int from, const ConvSpec& s)
{
    Layer l;
    l.kind = LayerKind::Conv;
    l.name = s.name;
    l.role = s.role;
    l.ir_prefix = s.prefix;
    l.block = s.block;
    l.inputs = {from};
    l.in = shape(from);
    l.cin = l.in.c;
    l.cout = s.cout;
    l.kh = s.kh;
    l.kw = s.kw;
    l.stride_h = s.stride_h;
    l.stride_w = s.stride_w;
    l.pad_t = s.pad_t == ConvSpec::kSame ? (s.kh - 1) / 2 : s.pad_t;
    l.pad_b = s.pad_b == ConvSpec::kSame ? (s.kh - 1) / 2 : s.pad_b;
    l.pad_l = s.pad_l == ConvSpec::kSame ? (s.kw - 1) / 2 : s.pad_l;
    l.pad_r = s.pad_r == ConvSpec::kSame ? (s.kw - 1) / 2 : s.pad_r;
    l.groups = s.groups;
    checkWindow(net_.name, l.name, l.in, l.kh, l.kw, l.stride_h, l.stride_w, l.pad_t, l.pad_l, l.pad_b, l.pad_r);
    if (l.cout < 1 || l.groups < 1 || l.cin % l.groups != 0 || l.cout % l.groups != 0)
        throw InputError("network " + net_.name + ": layer " + l.name + ": " + std::to_string(l.groups) + " groups do not divide " +
                         std::to_string(l.cin) + " input and " + std::to_string(l.cout) + " output channels");
    l.bias = s.bias;
    l.bn = s.bn;
    l.linear = s.linear;
    l.act = s.act;
    l.out = {s.cout, (l.in.h + l.pad_t + l.pad_b - l.kh) / l.stride_h + 1,
             (l.in.w + l.pad_l + l.pad_r - l.kw) / l.stride_w + 1};
    return push(std::move(l));
}

int NetworkBuilder::add(int skip, int branch, const std::string& name, const std::string& prefix, int block,
                        Activation act)
{
    Layer l;
    l.kind = LayerKind::Add;
    l.name = name;
    l.role = "add";
    l.ir_prefix = prefix;
    l.block = block;
    l.inputs = {skip, branch};
    l.in = l.out = shape(skip);
    l.act = act;
    return push(std::move(l));
}

int NetworkBuilder::globalAvgPool(int from, const std::string& name)
{
    Layer l;
    l.kind = LayerKind::GlobalAvgPool;
    l.name = name;
    l.role = "pool";
    l.inputs = {from};
    l.in = shape(from);
    l.out = {l.in.c, 1, 1};
    return push(std::move(l));
}

int NetworkBuilder::channelScale(int gate, int features, const std::string& name, const std::string& prefix, int block)
{
    Layer l;
    l.kind = LayerKind::ChannelScale;
    l.name = name;
    l.role = "se_scale";
    l.ir_prefix = prefix;
    l.block = block;
    l.inputs = {gate, features};
    l.in = shape(gate);
    l.out = shape(features);
    return push(std::move(l));
}

int NetworkBuilder::maxPool(int from, int kernel, int stride, int pad, const std::string& name)
{
    Layer l;
    l.kind = LayerKind::MaxPool;
    l.name = name;
    l.role = "pool";
    l.inputs = {from};
    l.in = shape(from);
    l.kh = l.kw = kernel;
    l.stride_h = l.stride_w = stride;
    l.pad_t = l.pad_l = l.pad_b = l.pad_r = pad;
    checkWindow(net_.name, name, l.in, kernel, kernel, stride, stride, pad, pad, pad, pad);
    l.out = {l.in.c, (l.in.h + 2 * pad - kernel) / stride + 1, (l.in.w + 2 * pad - kernel) / stride + 1};
    return push(std::move(l));
}

namespace {
Layer sameShape(LayerKind kind, const char* role, const std::string& name, int from, Shape3 s)
{
    Layer l;
    l.kind = kind;
    l.name = name;
    l.role = role;
    l.inputs = {from};
    l.in = l.out = s;
    return l;
}
}  // namespace

int NetworkBuilder::layerNorm(int from, const std::string& name)
{
    return push(sameShape(LayerKind::LayerNorm, "norm", name, from, shape(from)));
}

int NetworkBuilder::positionEmbedding(int from, const std::string& name)
{
    return push(sameShape(LayerKind::PositionEmbedding, "position_embedding", name, from, shape(from)));
}

int NetworkBuilder::biasActivation(int from, Activation act, const std::string& name)
{
    Layer l = sameShape(LayerKind::BiasActivation, "bias_activation", name, from, shape(from));
    l.act = act;
    return push(std::move(l));
}

int NetworkBuilder::attention(int q, int k, int v, int heads, const std::string& name)
{
    Layer l = sameShape(LayerKind::Attention, "attention", name, q, shape(q));
    l.inputs = {q, k, v};
    l.heads = heads;
    return push(std::move(l));
}

int NetworkBuilder::sequencePool(int features, int logits, const std::string& name)
{
    Layer l = sameShape(LayerKind::SequencePool, "sequence_pool", name, features, shape(features));
    l.inputs = {features, logits};
    l.out = {l.in.c, 1, 1};
    return push(std::move(l));
}

Network NetworkBuilder::finish(int numOutputs, LossKind loss, std::string description, std::string source)
{
    net_.num_outputs = numOutputs;
    net_.loss = loss;
    net_.description = std::move(description);
    net_.source = std::move(source);
    net_.finalize();
    return std::move(net_);
}

}  // namespace tinyscope
