#include "nn/finetune/FineTuneModel.h"

#include "Error.h"
#include "graph/ForwardLowering.h"
#include "space/PyRandom.h"
#include "tinyengine/QasFactors.h"

#include <cmath>
#include <limits>
#include <map>

namespace tinyscope {

namespace {

std::string sourceOf(const QuantizedParams& p) { return p.source.empty() ? std::string("params") : p.source; }

std::string joinShape(const std::vector<std::int64_t>& s)
{
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

}  // namespace

FineTuneModel::FineTuneModel(Network net, QuantizedParams params, const ResolvedScheme& scheme, AutodiffMode mode)
    : net_(std::move(net)), params_(std::move(params))
{
    if (scheme.numConvs() != net_.numConvs())
        throw InputError("the scheme has " + std::to_string(scheme.numConvs()) + " convs, " + net_.name + " has " +
                         std::to_string(net_.numConvs()));
    const bool reference = mode == AutodiffMode::Reference;
    // The forward ops of the training graph are lowerForward's; the reference mode needs the
    // compiled graph for the contributions its compiler drops.
    g_ = std::make_unique<TrainingGraph>(reference ? buildTrainingGraph(net_, scheme, mode) : lowerForward(net_));
    const TrainingGraph& g = *g_;
    const std::vector<std::string> problems = paramsMismatches(g, params_);
    if (!problems.empty())
        throw InputError(sourceOf(params_) + " does not fit " + net_.name + ": " +
                         problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
    std::set<std::pair<int, int>> dropped;
    if (reference) dropped.insert(g.dropped_contributions.begin(), g.dropped_contributions.end());
    fq_ = std::make_unique<FakeQuantGraph>(g, std::move(dropped), reference);

    std::map<std::string, int> byName;
    values_.resize(g.tensors.size());
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const Tensor& tt = g.tensors[t];
        if (tt.kind == TensorKind::Constant) values_[t] = torch::tensor(static_cast<float>(tt.value));
        if (tt.kind != TensorKind::Parameter || static_cast<int>(t) == g.input || static_cast<int>(t) == g.label) continue;
        values_[t] = FakeQuantGraph::parameterTensor(params_.floats(tt.name), tt.shape);
        byName[tt.name] = static_cast<int>(t);
    }

    for (int c = 0; c < net_.numConvs(); ++c) {
        const ConvUpdate& u = scheme.conv(c);
        if (!u.bias && !u.weight()) continue;
        const Layer& L = net_.conv(c);
        const std::string prefix = L.ir_prefix;
        const std::vector<float> eff = params_.floats(prefix + "_scale");
        const float sy = static_cast<float>(params_.scale(prefix + "_y_scale", sourceOf(params_), "the QAS factor of " + prefix + "'s update needs it"));
        const int O = L.cout;
        auto add = [&](bool bias) {
            FineTuneParameter p;
            p.name = prefix + (bias ? "_bias" : "_weight");
            auto it = byName.find(p.name);
            if (it == byName.end()) throw InputError(net_.name + ": the graph has no parameter " + p.name + " to update");
            p.tensor = it->second;
            p.conv = c;
            p.bias = bias;
            std::vector<float> f(static_cast<std::size_t>(O));
            if (bias) {
                for (int o = 0; o < O; ++o) f[static_cast<std::size_t>(o)] = qasBiasFactor(eff[static_cast<std::size_t>(o)], sy);
                p.qas = torch::tensor(f);
            } else {
                const float sx = static_cast<float>(params_.scale(prefix + "_x_scale", sourceOf(params_), "the QAS factor of " + prefix + "'s weight needs it"));
                for (int o = 0; o < O; ++o) f[static_cast<std::size_t>(o)] = qasWeightFactor(eff[static_cast<std::size_t>(o)], sy, sx);
                p.qas = torch::tensor(f).reshape({O, 1, 1, 1});
                p.k = reference ? u.k_compiler : u.k;
                const bool dw = L.depthwise();
                const int full = dw ? O : L.cin / L.groups;
                if (p.k < full) {
                    p.mask = dw ? torch::zeros({O, 1, 1, 1}) : torch::zeros({1, full, 1, 1});
                    if (dw) p.mask.narrow(0, 0, p.k).fill_(1.0f);
                    else p.mask.narrow(1, 0, p.k).fill_(1.0f);
                }
            }
            if (!bias && p.k == 0) return;   // the compiler's rounding left no channel
            p.value = values_[static_cast<std::size_t>(p.tensor)];
            p.elements = p.mask.defined() ? p.value.numel() / p.mask.numel() * p.k : p.value.numel();
            p.value.set_requires_grad(true);
            trainable_.push_back(std::move(p));
        };
        if (u.bias) add(true);
        if (u.weight()) add(false);
    }

    const std::string stem = net_.conv(0).ir_prefix;
    in_scale_ = params_.scale(stem + "_x_scale", sourceOf(params_), "the input's quantization needs it");
    in_zero_ = params_.value(stem + "_zero_x");
}

torch::Tensor FineTuneModel::quantizeInput(const torch::Tensor& images) const
{
    return torch::clamp(torch::round(images / in_scale_) + in_zero_, -128.0, 127.0);
}

double FineTuneModel::step(const torch::Tensor& input, const std::vector<int>& labels, double lr, bool qas)
{
    const int64_t N = input.size(0);
    std::vector<int64_t> idx(labels.begin(), labels.end());
    const torch::Tensor onehot = torch::one_hot(torch::tensor(idx, torch::kLong), classes()).to(torch::kFloat32);
    for (FineTuneParameter& p : trainable_) p.value.mutable_grad() = torch::Tensor();
    const FakeQuantGraph::Output out = fq_->run(values_, input, onehot);
    if (N == 0) return 0.0;
    out.loss.backward();
    torch::NoGradGuard guard;
    for (FineTuneParameter& p : trainable_) {
        torch::Tensor grad = p.value.grad();
        if (!grad.defined()) continue;
        if (p.mask.defined()) grad = grad * p.mask;
        if (qas) grad = grad * p.qas;
        p.value.sub_(grad, lr);
    }
    return out.loss.item<double>();
}

torch::Tensor FineTuneModel::logits(const torch::Tensor& input) const
{
    torch::NoGradGuard guard;
    const torch::Tensor label = torch::zeros({input.size(0), classes()});
    return fq_->run(values_, input, label).logits;
}

std::vector<std::pair<std::string, std::vector<float>>> FineTuneModel::values() const
{
    std::vector<std::pair<std::string, std::vector<float>>> out;
    for (const FineTuneParameter& p : trainable_) {
        const torch::Tensor c = p.value.detach().contiguous().reshape({-1});
        out.emplace_back(p.name, std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel()));
    }
    return out;
}

void FineTuneModel::setValues(const std::string& name, const std::vector<float>& v)
{
    for (FineTuneParameter& p : trainable_) {
        if (p.name != name) continue;
        if (static_cast<int64_t>(v.size()) != p.value.numel())
            throw InputError(name + ": " + std::to_string(v.size()) + " values for a parameter of shape " +
                             joinShape(std::vector<std::int64_t>(p.value.sizes().begin(), p.value.sizes().end())));
        torch::NoGradGuard guard;
        p.value.copy_(torch::tensor(v).reshape(p.value.sizes()));
        return;
    }
    throw InputError(name + ": not a parameter this scheme updates");
}

QuantizedParams FineTuneModel::quantizedParams() const
{
    QuantizedParams out = params_;
    for (const auto& [name, v] : values()) {
        const NdArray& a = params_.array(name);
        if (a.dtype == ScalarType::Int8) {
            std::vector<std::int8_t> q(v.size());
            for (std::size_t i = 0; i < v.size(); ++i) q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(v[i]), -128.0f, 127.0f));
            out.set(name, int8Array(q, a.shape));
        } else {
            std::vector<std::int32_t> q(v.size());
            for (std::size_t i = 0; i < v.size(); ++i)
                q[i] = static_cast<std::int32_t>(std::clamp(std::nearbyint(static_cast<double>(v[i])), -2147483648.0, 2147483647.0));
            out.set(name, int32Array(q, a.shape));
        }
    }
    return out;
}

void replaceClassifier(Network& net, QuantizedParams& params, int classes, std::uint64_t seed, double outputScale)
{
    if (classes < 2) throw InputError("a classifier needs at least 2 classes, got " + std::to_string(classes));
    const int headLayer = net.convLayers().back();
    Layer& head = net.layers[static_cast<std::size_t>(headLayer)];
    const std::string prefix = head.ir_prefix;
    const int C = head.cin / head.groups * head.kh * head.kw;
    const double sx = params.scale(prefix + "_x_scale", sourceOf(params), "the new classifier keeps the head's input scale");
    double sy = outputScale > 0 ? outputScale : params.scale(prefix + "_y_scale", sourceOf(params), "the new classifier keeps the head's output scale");
    params.scales[prefix + "_y_scale"] = sy;
    if (classes != head.cout) {
        head.cout = classes;
        head.out.c = classes;
        net.num_outputs = classes;
        net.finalize();
    }
    const std::vector<std::int64_t> wshape{classes, head.cin / head.groups, head.kh, head.kw};
    PyRandom rng(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(C));
    std::vector<std::int8_t> w(static_cast<std::size_t>(classes) * static_cast<std::size_t>(C));
    std::vector<float> eff(static_cast<std::size_t>(classes));
    std::vector<double> row(static_cast<std::size_t>(C));
    for (int o = 0; o < classes; ++o) {
        double mx = 0;
        for (double& x : row) {
            x = (2.0 * rng.random() - 1.0) * bound;
            mx = std::max(mx, std::fabs(x));
        }
        const double sw = mx > 0 ? mx / 127.0 : 1.0;
        for (int i = 0; i < C; ++i)
            w[static_cast<std::size_t>(o) * static_cast<std::size_t>(C) + static_cast<std::size_t>(i)] =
                static_cast<std::int8_t>(std::clamp(std::nearbyint(row[static_cast<std::size_t>(i)] / sw), -127.0, 127.0));
        eff[static_cast<std::size_t>(o)] = static_cast<float>(sx * sw / sy);
    }
    params.set(prefix + "_weight", int8Array(w, wshape));
    params.set(prefix + "_bias", int32Array(std::vector<std::int32_t>(static_cast<std::size_t>(classes), 0), {classes}));
    params.set(prefix + "_scale", float32Array(eff, {classes}));
}

}  // namespace tinyscope
