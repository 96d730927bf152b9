#include "nn/quantize/FakeQuantAutograd.h"

#include "nn/quantize/FakeQuantGraph.h"
#include "io/Text.h"

namespace tinyscope {

namespace {

std::vector<float> toValues(const torch::Tensor& t)
{
    torch::Tensor c = t.detach().to(torch::kFloat32).contiguous().reshape({-1});
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

AutogradResult fakeQuantAutograd(const TrainingGraph& g, const ParameterStore& params, FakeQuantSemantics semantics)
{
    const bool quirks = semantics == FakeQuantSemantics::Reference;
    std::set<std::pair<int, int>> dropped;
    if (quirks) dropped.insert(g.dropped_contributions.begin(), g.dropped_contributions.end());
    const FakeQuantGraph fq(g, std::move(dropped), quirks);

    std::vector<torch::Tensor> val(g.tensors.size());
    std::map<std::string, torch::Tensor> trainable;
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const Tensor& tt = g.tensors[t];
        if (tt.kind == TensorKind::Constant) val[t] = torch::tensor(static_cast<float>(tt.value));
        if (tt.kind != TensorKind::Parameter || static_cast<int>(t) == g.input || static_cast<int>(t) == g.label) continue;
        torch::Tensor v = FakeQuantGraph::parameterTensor(params.get(tt.name), tt.shape);
        if ((endsWith(tt.name, "_weight") || endsWith(tt.name, "_bias")) && tt.layer >= 0) {
            v.set_requires_grad(true);
            trainable[tt.name] = v;
        }
        val[t] = v;
    }
    const Tensor& in = g.tensor(g.input);
    const Tensor& lab = g.tensor(g.label);
    const torch::Tensor input = FakeQuantGraph::parameterTensor(params.get(in.name), in.shape);
    const torch::Tensor label = FakeQuantGraph::parameterTensor(params.get(lab.name), lab.shape);
    const FakeQuantGraph::Output out = fq.run(std::move(val), input, label, true);

    AutogradResult result;
    for (int i = 0; i < g.forward_ops; ++i) result.forward.push_back(toValues(out.values[static_cast<std::size_t>(g.op(i).output)]));
    result.loss = out.loss.item<double>();
    out.loss.backward();
    for (auto& [name, t] : trainable)
        result.gradients[name] = t.grad().defined() ? toValues(t.grad()) : std::vector<float>(static_cast<std::size_t>(t.numel()), 0.f);
    return result;
}

}  // namespace tinyscope
