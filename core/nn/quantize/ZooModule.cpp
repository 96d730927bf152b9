#include "nn/quantize/ZooModule.h"

#include <cmath>

namespace tinyscope {

namespace {
std::string moduleName(const std::string& layerName)
{
    std::string s = layerName;
    for (char& c : s)
        if (c == '.') c = '_';   // torch module names may not contain dots
    return s;
}

// [N, C, H, W] -> [N, H·W, C] and back, so a Linear / LayerNorm acts on channels per position.
torch::Tensor tokens(const torch::Tensor& x) { return x.flatten(2).transpose(1, 2); }
torch::Tensor untokens(const torch::Tensor& t, int64_t h, int64_t w)
{
    return t.transpose(1, 2).reshape({t.size(0), t.size(2), h, w});
}
}  // namespace

ZooModuleImpl::ZooModuleImpl(const Network& net, std::uint64_t seed) : net_(net)
{
    torch::manual_seed(seed);
    slots_.resize(net_.layers.size());
    for (std::size_t i = 0; i < net_.layers.size(); ++i) {
        const Layer& l = net_.layers[i];
        Slot& s = slots_[i];
        const std::string n = moduleName(l.name);
        switch (l.kind) {
        case LayerKind::Conv:
            if (l.linear) {
                s.linear = register_module(n, torch::nn::Linear(torch::nn::LinearOptions(l.cin, l.cout).bias(l.bias)));
            } else {
                // Padding is applied explicitly in forward (it may differ per side).
                s.conv = register_module(n, torch::nn::Conv2d(torch::nn::Conv2dOptions(l.cin, l.cout, {l.kh, l.kw})
                                                                  .stride({l.stride_h, l.stride_w})
                                                                  .groups(l.groups)
                                                                  .bias(l.bias)));
            }
            if (l.bn) s.bn = register_module(n + "_bn", torch::nn::BatchNorm2d(l.cout));
            break;
        case LayerKind::LayerNorm:
            s.norm = register_module(n, torch::nn::LayerNorm(torch::nn::LayerNormOptions({l.out.c})));
            break;
        case LayerKind::PositionEmbedding:
            s.param = register_parameter(n, torch::randn({1, l.out.c, l.out.h, l.out.w}) * 0.2);
            break;
        case LayerKind::BiasActivation:
            s.param = register_parameter(n, torch::zeros({l.out.c}));
            break;
        default:
            break;
        }
    }
}

torch::Tensor ZooModuleImpl::activate(const torch::Tensor& x, Activation a) const
{
    switch (a) {
    case Activation::None: return x;
    case Activation::ReLU: return torch::relu(x);
    case Activation::ReLU6: return torch::clamp(x, 0.0, 6.0);
    case Activation::HSigmoid: return torch::clamp(x + 3.0, 0.0, 6.0) / 6.0;
    case Activation::GELU: return torch::gelu(x);
    }
    return x;
}

torch::Tensor ZooModuleImpl::forward(const torch::Tensor& x)
{
    std::vector<torch::Tensor> outs;
    return forward(x, outs);
}

torch::Tensor ZooModuleImpl::forward(const torch::Tensor& input, std::vector<torch::Tensor>& out)
{
    out.assign(net_.layers.size(), torch::Tensor());
    auto src = [&](int layer) -> const torch::Tensor& { return layer < 0 ? input : out[static_cast<std::size_t>(layer)]; };
    for (std::size_t i = 0; i < net_.layers.size(); ++i) {
        const Layer& l = net_.layers[i];
        Slot& s = slots_[i];
        const torch::Tensor& x = src(l.inputs[0]);
        torch::Tensor y;
        switch (l.kind) {
        case LayerKind::Conv:
            if (l.linear) y = untokens(s.linear(tokens(x)), x.size(2), x.size(3));
            else y = s.conv(torch::constant_pad_nd(x, {l.pad_l, l.pad_r, l.pad_t, l.pad_b}, 0));
            if (l.bn) y = s.bn(y);
            y = activate(y, l.act);
            break;
        case LayerKind::Add:
            y = activate(x + src(l.inputs[1]), l.act);
            break;
        case LayerKind::GlobalAvgPool:
            y = x.mean({2, 3}, true);
            break;
        case LayerKind::ChannelScale:
            y = src(l.inputs[1]) * x;
            break;
        case LayerKind::MaxPool:
            y = torch::max_pool2d(x, {l.kh, l.kw}, {l.stride_h, l.stride_w}, {l.pad_t, l.pad_l});
            break;
        case LayerKind::LayerNorm:
            y = untokens(s.norm(tokens(x)), x.size(2), x.size(3));
            break;
        case LayerKind::PositionEmbedding:
            y = x + s.param;
            break;
        case LayerKind::BiasActivation:
            y = activate(x + s.param.reshape({1, -1, 1, 1}), l.act);
            break;
        case LayerKind::Attention: {
            const int64_t h = l.heads, c = x.size(1), d = c / h, t = x.size(2) * x.size(3), n = x.size(0);
            auto split = [&](const torch::Tensor& v) { return tokens(v).reshape({n, t, h, d}).transpose(1, 2); };   // [N, h, T, d]
            const torch::Tensor q = split(x), k = split(src(l.inputs[1])), v = split(src(l.inputs[2]));
            const torch::Tensor att = torch::softmax(torch::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(d)), -1);
            y = untokens(torch::matmul(att, v).transpose(1, 2).reshape({n, t, c}), x.size(2), x.size(3));
            break;
        }
        case LayerKind::SequencePool: {
            const torch::Tensor w = torch::softmax(src(l.inputs[1]).flatten(2), -1);   // [N, 1, T]
            y = torch::matmul(x.flatten(2), w.transpose(1, 2)).unsqueeze(-1);          // [N, C, 1, 1]
            break;
        }
        }
        out[i] = y;
    }
    return out.back().flatten(1);
}

}  // namespace tinyscope
