#include "nn/quantize/FakeQuantGraph.h"

#include "Error.h"

namespace tinyscope {

namespace {

// round with a straight-through gradient, as tiny-training's fake-quantized ops.
torch::Tensor steRound(const torch::Tensor& r) { return r + (torch::round(r) - r).detach(); }

torch::Tensor perChannel(const torch::Tensor& s) { return s.reshape({1, -1, 1, 1}); }

}  // namespace

torch::Tensor FakeQuantGraph::parameterTensor(const std::vector<float>& v, const TensorShape& shape)
{
    std::vector<int64_t> dims(shape.begin(), shape.end());
    if (dims.empty()) dims = {1};
    return torch::tensor(v, torch::kFloat32).reshape(dims);
}

FakeQuantGraph::FakeQuantGraph(const TrainingGraph& g, std::set<std::pair<int, int>> dropped, bool rawWeightInput)
    : g_(g), dropped_(std::move(dropped)), rawWeightInput_(rawWeightInput)
{
    for (int i = 0; i < g.forward_ops; ++i)
        if (g.op(i).kind == OpKind::Cast) logits_ = g.op(i).output;
}

FakeQuantGraph::Output FakeQuantGraph::run(std::vector<torch::Tensor> val, const torch::Tensor& input, const torch::Tensor& label,
                                           bool keep) const
{
    const TrainingGraph& g = g_;
    if (val.size() != g.tensors.size()) throw std::logic_error("FakeQuantGraph::run: one value per tensor");
    val[static_cast<std::size_t>(g.input)] = input;
    val[static_cast<std::size_t>(g.label)] = label;
    const int64_t N = input.size(0);
    for (int i = 0; i < g.forward_ops; ++i) {
        const Op& op = g.op(i);
        auto in = [&](int slot) {
            const torch::Tensor& x = val[static_cast<std::size_t>(op.inputs[static_cast<std::size_t>(slot)])];
            return dropped_.count({i, slot}) ? x.detach() : x;
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
                return torch::conv2d(torch::constant_pad_nd(x, {pl, pr, pt, pb}, 0), w, torch::Tensor(), stride, zero, one, groups);
            };
            const torch::Tensor x = in(0), w = in(1), zx = in(3);
            torch::Tensor z;
            if (rawWeightInput_)   // same value; the weight sees the raw input
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
        case OpKind::McuMean: {
            const TensorShape& is = g.tensor(op.inputs[0]).shape;
            y = steRound(in(0).sum({2, 3}, true) / static_cast<double>(is[2] * is[3]));
            break;
        }
        case OpKind::Reshape: {
            std::vector<int64_t> dims(os.begin(), os.end());
            if (!dims.empty() && g.tensor(op.inputs[0]).kind != TensorKind::Parameter) dims[0] = N;   // the batch
            y = in(0).reshape(dims);
            break;
        }
        case OpKind::Cast:
            y = in(0);
            break;
        case OpKind::LogSoftmax:
            y = torch::log_softmax(in(0), -1);
            break;
        case OpKind::CrossEntropyWithLogits:
            y = -(in(0) * in(1)).sum() / static_cast<double>(N);
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
            throw InputError(std::string("the fake-quantized forward has no rule for ") + opTypeName(op.kind));
        }
        val[static_cast<std::size_t>(op.output)] = y;
    }
    Output out;
    out.loss = val[static_cast<std::size_t>(g.loss)];
    if (logits_ >= 0) out.logits = val[static_cast<std::size_t>(logits_)];
    if (keep) out.values = std::move(val);
    return out;
}

}  // namespace tinyscope
