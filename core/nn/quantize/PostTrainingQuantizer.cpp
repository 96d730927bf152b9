#include "nn/quantize/PostTrainingQuantizer.h"

#include "Error.h"
#include "nn/supernet/Supernet.h"
#include "nn/quantize/ZooModule.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tinyscope {

namespace {

at::Tensor activate(const at::Tensor& x, Activation a)
{
    switch (a) {
    case Activation::ReLU: return at::relu(x);
    case Activation::ReLU6: return at::hardtanh(x, 0.0, 6.0);
    case Activation::HSigmoid: return at::hardtanh(x + 3.0, 0.0, 6.0) / 6.0;
    case Activation::None: return x;
    case Activation::GELU: return at::gelu(x);
    }
    return x;
}

at::Tensor floatTensor(const std::vector<float>& v, std::vector<std::int64_t> shape)
{
    return at::from_blob(const_cast<float*>(v.data()), shape, at::kFloat).clone();
}

struct QParams {
    double scale = 1.0;
    int zero = 0;
};

// Asymmetric int8: [lo, hi] (0 included) onto [−128, 127].
QParams asymmetric(double lo, double hi)
{
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
    if (hi - lo < 1e-8) hi = lo + 1e-8;
    QParams q;
    q.scale = (hi - lo) / 255.0;
    q.zero = static_cast<int>(std::clamp(std::nearbyint(-128.0 - lo / q.scale), -128.0, 127.0));
    return q;
}

// After a ReLU-like clamp: [0, hi] with zero point −128, so the int8 clamp is the activation.
QParams clamped(double hi) { return {std::max(hi, 1e-8) / 255.0, -128}; }

std::vector<std::int8_t> int8s(const at::Tensor& t)
{
    at::Tensor c = t.to(at::kChar).contiguous();
    return std::vector<std::int8_t>(c.data_ptr<std::int8_t>(), c.data_ptr<std::int8_t>() + c.numel());
}

std::vector<std::int64_t> dims(const at::Tensor& t) { return std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()); }

}  // namespace

FloatModel floatModelFromSubnet(const Network& net, const Subnet& subnet)
{
    FloatModel m;
    m.net = net;
    m.weight.resize(net.layers.size());
    m.bias.resize(net.layers.size());
    NetWeights w = subnet.weights();   // shallow copies of the tensors
    foldBn(w);
    std::vector<std::pair<at::Tensor, at::Tensor>> convs;
    auto push = [&](const ConvBn& c) { convs.emplace_back(c.folded_weight, c.folded_bias); };
    push(w.first);
    for (const BlockWeights& b : w.blocks) {
        if (!b.shape.fused) {
            push(b.ib);
            push(b.dw);
            if (b.se_reduce_w.defined()) {
                convs.emplace_back(b.se_reduce_w, b.se_reduce_b);
                convs.emplace_back(b.se_expand_w, b.se_expand_b);
            }
        }
        push(b.pl);
    }
    push(w.mix);
    convs.emplace_back(w.fc_w.reshape({w.fc_w.size(0), w.fc_w.size(1), 1, 1}), w.fc_b);
    if (static_cast<int>(convs.size()) != net.numConvs())
        throw std::logic_error("floatModelFromSubnet: " + std::to_string(convs.size()) + " convs for a network of " + std::to_string(net.numConvs()));
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const std::size_t l = static_cast<std::size_t>(net.convLayers()[static_cast<std::size_t>(ci)]);
        m.weight[l] = convs[static_cast<std::size_t>(ci)].first.detach().clone();
        m.bias[l] = convs[static_cast<std::size_t>(ci)].second.detach().clone();
    }
    m.description = net.description;
    return m;
}

FloatModel floatModelFromZoo(ZooModuleImpl& module)
{
    FloatModel m;
    m.net = module.network();
    const Network& net = m.net;
    m.weight.resize(net.layers.size());
    m.bias.resize(net.layers.size());
    auto params = module.named_parameters(true);
    auto buffers = module.named_buffers(true);
    auto get = [&](const std::string& key, bool buffer) -> at::Tensor {
        const auto& dict = buffer ? buffers : params;
        const at::Tensor* t = dict.find(key);
        return t ? t->detach() : at::Tensor();
    };
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        if (!l.isConv()) continue;
        std::string n = l.name;
        std::replace(n.begin(), n.end(), '.', '_');
        at::Tensor w = get(n + ".weight", false);
        at::Tensor b = get(n + ".bias", false);
        if (l.linear) w = w.reshape({w.size(0), w.size(1), 1, 1});
        if (!b.defined()) b = at::zeros({l.cout});
        if (l.bn) {
            const at::Tensor gamma = get(n + "_bn.weight", false), beta = get(n + "_bn.bias", false);
            const at::Tensor mean = get(n + "_bn.running_mean", true), var = get(n + "_bn.running_var", true);
            const at::Tensor s = gamma / at::sqrt(var + 1e-5);
            w = w * s.view({-1, 1, 1, 1});
            b = (b - mean) * s + beta;
        }
        m.weight[i] = w.clone();
        m.bias[i] = b.clone();
    }
    m.description = net.description;
    return m;
}

FloatModel dequantizedModel(const Network& net, const QuantizedParams& p)
{
    FloatModel m;
    m.net = net;
    m.weight.resize(net.layers.size());
    m.bias.resize(net.layers.size());
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const std::size_t li = static_cast<std::size_t>(net.convLayers()[static_cast<std::size_t>(ci)]);
        const Layer& l = net.layers[li];
        const std::string& pre = l.ir_prefix;
        for (const char* s : {"_x_scale", "_y_scale"})
            if (!p.hasScale(pre + s)) throw InputError(p.source + ": the float model needs scale.json's '" + pre + s + "'");
        const double sx = p.scales.at(pre + "_x_scale"), sy = p.scales.at(pre + "_y_scale");
        const NdArray& wa = p.array(pre + "_weight");
        const std::vector<float> w = p.floats(pre + "_weight"), b = p.floats(pre + "_bias"), eff = p.floats(pre + "_scale");
        at::Tensor sw = floatTensor(eff, {static_cast<std::int64_t>(eff.size())}) * (sy / sx);
        m.weight[li] = floatTensor(w, wa.shape) * sw.view({-1, 1, 1, 1});
        m.bias[li] = floatTensor(b, {static_cast<std::int64_t>(b.size())}) * sw * sx;
    }
    m.description = net.description + " (dequantized from " + p.source + ")";
    return m;
}

at::Tensor floatForward(const FloatModel& m, const at::Tensor& x, ActivationRanges* ranges)
{
    at::NoGradGuard guard;
    const Network& net = m.net;
    std::vector<at::Tensor> out(net.layers.size());
    auto src = [&](int l) -> const at::Tensor& { return l < 0 ? x : out[static_cast<std::size_t>(l)]; };
    if (ranges && !ranges->seen) {
        ranges->lo.assign(net.layers.size(), std::numeric_limits<float>::max());
        ranges->hi.assign(net.layers.size(), std::numeric_limits<float>::lowest());
        ranges->in_lo = std::numeric_limits<float>::max();
        ranges->in_hi = std::numeric_limits<float>::lowest();
        ranges->seen = true;
    }
    if (ranges) {
        ranges->in_lo = std::min(ranges->in_lo, x.min().item<float>());
        ranges->in_hi = std::max(ranges->in_hi, x.max().item<float>());
    }
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        const at::Tensor& a = src(l.inputs[0]);
        at::Tensor y;
        switch (l.kind) {
        case LayerKind::Conv:
            y = at::conv2d(at::constant_pad_nd(a, {l.pad_l, l.pad_r, l.pad_t, l.pad_b}, 0), m.weight[i], m.bias[i],
                           at::IntArrayRef{l.stride_h, l.stride_w}, at::IntArrayRef{0, 0}, at::IntArrayRef{1, 1}, l.groups);
            y = activate(y, l.act);
            break;
        case LayerKind::Add: y = activate(a + src(l.inputs[1]), l.act); break;
        case LayerKind::GlobalAvgPool: y = a.mean({2, 3}, true); break;
        case LayerKind::ChannelScale: y = src(l.inputs[1]) * a; break;
        default:
            throw InputError(net.name + ": layer " + std::to_string(i) + " '" + l.name + "' (" + layerKindName(l.kind) +
                             ") has no int8 lowering");
        }
        if (ranges) {
            ranges->lo[i] = std::min(ranges->lo[i], y.min().item<float>());
            ranges->hi[i] = std::max(ranges->hi[i], y.max().item<float>());
        }
        out[i] = y;
    }
    return out.back().flatten(1);
}

QuantizedParams quantizeModel(const FloatModel& m, const at::Tensor& calibration)
{
    const Network& net = m.net;
    ActivationRanges r;
    for (std::int64_t s = 0; s < calibration.size(0); s += 64) floatForward(m, calibration.slice(0, s, std::min(calibration.size(0), s + 64)), &r);

    // Quantization of every layer output (and the network input).
    std::vector<QParams> q(net.layers.size());
    const QParams in = asymmetric(r.in_lo, r.in_hi);
    auto of = [&](int layer) { return layer < 0 ? in : q[static_cast<std::size_t>(layer)]; };
    QuantizedParams p;
    p.source = "post-training quantization";
    auto put8 = [&](const std::string& k, int v) { p.set(k, int8Array({static_cast<std::int8_t>(v)}, {1})); };
    auto putF = [&](const std::string& k, double v) { p.set(k, float32Array({static_cast<float>(v)}, {1})); };
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        switch (l.kind) {
        case LayerKind::Conv: {
            at::Tensor w = m.weight[i], b = m.bias[i];
            if (l.act == Activation::HSigmoid) {   // clamp((x + 3)/6, 0, 1): fold the affine part
                w = w / 6.0;
                b = (b + 3.0) / 6.0;
                q[i] = {1.0 / 255.0, -128};
            } else if (l.act == Activation::ReLU || l.act == Activation::ReLU6) {
                q[i] = clamped(r.hi[i]);
            } else {
                q[i] = asymmetric(r.lo[i], r.hi[i]);
            }
            const QParams x = of(l.inputs[0]);
            const at::Tensor absmax = w.abs().amax({1, 2, 3}).clamp_min(1e-12);
            const at::Tensor sw = (absmax / 127.0).to(at::kDouble);
            const at::Tensor wq = at::clamp(at::round(w.to(at::kDouble) / sw.view({-1, 1, 1, 1})), -127, 127);
            const at::Tensor bq = at::clamp(at::round(b.to(at::kDouble) / (sw * x.scale)), -2147483648.0, 2147483647.0);
            const at::Tensor eff = (sw * (x.scale / q[i].scale)).to(at::kFloat).contiguous();
            const at::Tensor bi = bq.to(at::kInt).contiguous();
            p.set(l.ir_prefix + "_weight", int8Array(int8s(wq), dims(w)));
            p.set(l.ir_prefix + "_bias", int32Array(std::vector<std::int32_t>(bi.data_ptr<std::int32_t>(), bi.data_ptr<std::int32_t>() + bi.numel()), {l.cout}));
            put8(l.ir_prefix + "_zero_x", x.zero);
            put8(l.ir_prefix + "_zero_y", q[i].zero);
            p.set(l.ir_prefix + "_scale", float32Array(std::vector<float>(eff.data_ptr<float>(), eff.data_ptr<float>() + eff.numel()), {l.cout}));
            p.scales[l.ir_prefix + "_x_scale"] = x.scale;
            p.scales[l.ir_prefix + "_y_scale"] = q[i].scale;
            break;
        }
        case LayerKind::Add:
        case LayerKind::ChannelScale: {
            q[i] = l.act == Activation::ReLU || l.act == Activation::ReLU6 ? clamped(r.hi[i]) : asymmetric(r.lo[i], r.hi[i]);
            const QParams a = of(l.inputs[0]), c = of(l.inputs[1]);
            put8(l.ir_prefix + "_zero_x1", a.zero);
            put8(l.ir_prefix + "_zero_x2", c.zero);
            putF(l.ir_prefix + "_scale_x1", a.scale);
            putF(l.ir_prefix + "_scale_x2", c.scale);
            put8(l.ir_prefix + "_zero_y", q[i].zero);
            putF(l.ir_prefix + "_scale_y", q[i].scale);
            break;
        }
        case LayerKind::GlobalAvgPool: q[i] = of(l.inputs[0]); break;   // mcumean keeps the input's scale and zero point
        default: throw InputError(net.name + ": layer '" + l.name + "' has no int8 lowering");
        }
    }
    return p;
}

}  // namespace tinyscope
