#include "nn/quantize/FakeQuantAutograd.h"

#include "Error.h"

#include <torch/torch.h>

#include <set>

namespace tinyscope {

namespace {

torch::Tensor fromValues(const std::vector<float>& v, const TensorShape& shape)
{
    std::vector<int64_t> dims(shape.begin(), shape.end());
    return torch::tensor(v, torch::kFloat32).reshape(dims);
}

std::vector<float> toValues(const torch::Tensor& t)
{
    torch::Tensor c = t.detach().to(torch::kFloat32).contiguous().reshape({-1});
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// round with a straight-through gradient, as tiny-training's fake-quantized ops.
torch::Tensor steRound(const torch::Tensor& r) { return r + (torch::round(r) - r).detach(); }

torch::Tensor perChannel(const torch::Tensor& s) { return s.reshape({1, -1, 1, 1}); }

}  // namespace

AutogradResult fakeQuantAutograd(const TrainingGraph& g, const ParameterStore& params, FakeQuantSemantics semantics)
{
    const bool quirks = semantics == FakeQuantSemantics::Reference;
    std::set<std::pair<int, int>> dropped;
    if (quirks) dropped.insert(g.dropped_contributions.begin(), g.dropped_contributions.end());

    std::vector<torch::Tensor> val(g.tensors.size());
    std::map<std::string, torch::Tensor> trainable;
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const Tensor& tt = g.tensors[t];
        if (tt.kind == TensorKind::Constant) val[t] = torch::tensor(static_cast<float>(tt.value));
        if (tt.kind != TensorKind::Parameter) continue;
        torch::Tensor v = fromValues(params.get(tt.name), tt.shape.empty() ? TensorShape{1} : tt.shape);
        auto endsWith = [&](const char* suffix) {
            const std::string x(suffix);
            return tt.name.size() >= x.size() && tt.name.compare(tt.name.size() - x.size(), x.size(), x) == 0;
        };
        const bool learn = endsWith("_weight") || endsWith("_bias");
        if (learn && tt.layer >= 0) {
            v.set_requires_grad(true);
            trainable[tt.name] = v;
        }
        val[t] = v;
    }

    AutogradResult result;
    for (int i = 0; i < g.forward_ops; ++i) {
        const Op& op = g.op(i);
        auto in = [&](int slot) {
            const torch::Tensor& x = val[static_cast<std::size_t>(op.inputs[static_cast<std::size_t>(slot)])];
            return dropped.count({i, slot}) ? x.detach() : x;
        };
        const TensorShape& os = g.tensor(op.output).shape;
        torch::Tensor y;
        switch (op.kind) {
        case OpKind::McuConv2d: {
            const Json& a = op.attrs;
            const int64_t pt = a["padding"][0], pl = a["padding"][1], pb = a["padding"][2], pr = a["padding"][3];
            const std::vector<int64_t> stride{a["strides"][0].get<int64_t>(), a["strides"][1].get<int64_t>()};
            const int64_t groups = a["groups"];
            auto conv = [&](const torch::Tensor& x, const torch::Tensor& w) {
                const std::vector<int64_t> zero{0, 0}, one{1, 1};
                return torch::conv2d(torch::constant_pad_nd(x, {pl, pr, pt, pb}, 0), w, torch::Tensor(), stride, zero, one,
                                     groups);
            };
            const torch::Tensor x = in(0), w = in(1), zx = in(3);
            torch::Tensor z;
            if (quirks)   // same value; the weight sees the raw input
                z = conv(x, w) - conv(torch::ones_like(x) * zx, w.detach());
            else
                z = conv(x - zx, w);
            z = z + perChannel(in(2));
            y = steRound(z * perChannel(in(5))) + in(4);
            break;
        }
        case OpKind::McuTruncate:
            y = torch::clamp(in(0), -128.0, 127.0);
            break;
        case OpKind::McuAdd:
        case OpKind::McuMultiply: {
            const torch::Tensor t1 = (in(0) - in(2)) * in(4), t2 = (in(1) - in(3)) * in(5);
            const torch::Tensor u = op.kind == OpKind::McuAdd ? t1 + t2 : t1 * t2;
            y = steRound(u / in(7)) + in(6);
            break;
        }
        case OpKind::McuMean:
            y = steRound(in(0).sum({2, 3}, true) / static_cast<double>(g.tensor(op.inputs[0]).shape[2] * g.tensor(op.inputs[0]).shape[3]));
            break;
        case OpKind::Reshape:
            y = in(0).reshape(std::vector<int64_t>(os.begin(), os.end()));
            break;
        case OpKind::Cast:
            y = in(0);
            break;
        case OpKind::LogSoftmax:
            y = torch::log_softmax(in(0), -1);
            break;
        case OpKind::CrossEntropyWithLogits:
            y = -(in(0) * in(1)).sum();
            break;
        case OpKind::Subtract:
            y = in(0) - in(1);
            break;
        case OpKind::Multiply:
            y = in(0) * in(1);
            break;
        case OpKind::Mean:
            y = in(0).mean();
            break;
        default:
            throw InputError(std::string("fakeQuantAutograd: no forward for ") + opTypeName(op.kind));
        }
        val[static_cast<std::size_t>(op.output)] = y;
        result.forward.push_back(toValues(y));
    }
    torch::Tensor loss = val[static_cast<std::size_t>(g.loss)];
    result.loss = loss.item<double>();
    loss.backward();
    for (auto& [name, t] : trainable)
        result.gradients[name] = t.grad().defined() ? toValues(t.grad()) : std::vector<float>(static_cast<std::size_t>(t.numel()), 0.f);
    return result;
}

}  // namespace tinyscope
