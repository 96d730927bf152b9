#include "graph/Autodiff.h"

#include "graph/DeadCodeElimination.h"
#include "graph/ForwardLowering.h"
#include "graph/GradientRules.h"
#include "io/Text.h"

#include <stdexcept>

namespace tinyscope {

namespace {

// Parameters in the order a post-order walk from the loss first reads them (Relay's all_vars),
// which fixes the order of the gradient outputs (reversed, as tiny-training's obtain_grads).
std::vector<int> parameterOrder(const TrainingGraph& g)
{
    std::vector<int> order;
    std::vector<char> seenOp(g.ops.size(), 0), seenT(g.tensors.size(), 0);
    std::vector<std::pair<int, std::size_t>> stack{{g.tensor(g.loss).producer, 0}};
    seenOp[static_cast<std::size_t>(stack.back().first)] = 1;
    while (!stack.empty()) {
        auto& [op, slot] = stack.back();
        const Op& o = g.op(op);
        if (slot == o.inputs.size()) {
            stack.pop_back();
            continue;
        }
        const int t = o.inputs[slot++];
        const Tensor& tt = g.tensor(t);
        if (tt.kind == TensorKind::Parameter && !seenT[static_cast<std::size_t>(t)]) {
            seenT[static_cast<std::size_t>(t)] = 1;
            order.push_back(t);
        } else if (tt.producer >= 0 && !seenOp[static_cast<std::size_t>(tt.producer)]) {
            seenOp[static_cast<std::size_t>(tt.producer)] = 1;
            stack.emplace_back(tt.producer, 0);
        }
    }
    return order;
}

class Walk {
public:
    Walk(TrainingGraph& g, AutodiffMode mode, const std::vector<char>& wantParam)
        : g_(g), b_(g), ctx_(b_, mode), mode_(mode)
    {
        // A tensor needs a gradient when a wanted parameter reaches it (forward order).
        req_.assign(g.tensors.size(), 0);
        for (std::size_t t = 0; t < wantParam.size(); ++t) req_[t] = wantParam[t];
        for (int i = 0; i < g.forward_ops; ++i) {
            const Op& o = g.op(i);
            for (int in : o.inputs)
                if (req_[static_cast<std::size_t>(in)]) req_[static_cast<std::size_t>(o.output)] = 1;
        }
    }

    void run()
    {
        g_.parameter_gradient.assign(g_.tensors.size(), -1);
        const int lossOp = g_.tensor(g_.loss).producer;
        b_.setContext(Phase::Backward, OpRole::Seed, -1);
        const int seed = b_.ones(g_.tensor(g_.loss).shape);
        if (mode_ == AutodiffMode::Correct) correct(seed);
        else {
            assigned_.assign(g_.tensors.size(), -1);
            writer_.assign(g_.tensors.size(), {-1, -1});
            visited_.assign(static_cast<std::size_t>(g_.forward_ops), 0);
            assigned_[static_cast<std::size_t>(g_.loss)] = seed;
            visit(lossOp);
            for (std::size_t t = 0; t < assigned_.size() && t < g_.parameter_gradient.size(); ++t)
                if (g_.tensors[t].kind == TensorKind::Parameter) g_.parameter_gradient[t] = assigned_[t];
        }
    }

private:
    // Applies the rule of forward op `i` to gradient `grad`; returns the gradients of its inputs.
    std::vector<int> apply(int i, int grad)
    {
        const Op& op = g_.op(i);
        std::vector<char> wanted(op.inputs.size(), 0);
        bool any = false;
        for (std::size_t s = 0; s < op.inputs.size(); ++s) any |= (wanted[s] = req_[static_cast<std::size_t>(op.inputs[s])]);
        if (!any) return std::vector<int>(op.inputs.size(), -1);
        const GradientRule rule = gradientRule(op.kind);
        if (!rule) throw std::logic_error(std::string("no gradient rule for ") + opTypeName(op.kind));
        const int layer = op.layer;
        b_.setContext(Phase::Backward, OpRole::Gradient, layer);
        const int k = layer >= 0 && layer < static_cast<int>(g_.weight_channels.size())
                          ? g_.weight_channels[static_cast<std::size_t>(layer)] : 0;
        // The op may move when the rule appends ops: hand the rule a copy.
        const Op copy = op;
        ctx_.begin(copy, std::move(wanted), k);
        rule(ctx_, grad);
        return ctx_.gradients();
    }

    void correct(int seed)
    {
        std::vector<std::vector<int>> contrib(g_.tensors.size());
        contrib[static_cast<std::size_t>(g_.loss)].push_back(seed);
        auto total = [&](int t, int layer) {
            std::vector<int>& c = contrib[static_cast<std::size_t>(t)];
            int sum = c.empty() ? -1 : c[0];
            b_.setContext(Phase::Backward, OpRole::Accumulate, layer);
            for (std::size_t j = 1; j < c.size(); ++j) sum = b_.add(sum, c[j]);
            return sum;
        };
        for (int i = g_.forward_ops - 1; i >= 0; --i) {
            const int out = g_.op(i).output;
            if (contrib[static_cast<std::size_t>(out)].empty()) continue;
            const int grad = total(out, g_.op(i).layer);
            const std::vector<int> gs = apply(i, grad);
            const Op& op = g_.op(i);
            for (std::size_t s = 0; s < gs.size(); ++s)
                if (gs[s] >= 0) contrib[static_cast<std::size_t>(op.inputs[s])].push_back(gs[s]);
        }
        for (std::size_t t = 0; t < g_.tensors.size() && t < contrib.size(); ++t)
            if (g_.tensors[t].kind == TensorKind::Parameter && !contrib[t].empty())
                g_.parameter_gradient[t] = total(static_cast<int>(t), g_.tensors[t].layer);
    }

    // MIT's AutoDiff.visit_call: rule first, overwrite the arguments' gradients, then visit the
    // arguments last to first (each op once).
    void visit(int i)
    {
        visited_[static_cast<std::size_t>(i)] = 1;
        const int grad = assigned_[static_cast<std::size_t>(g_.op(i).output)];
        if (grad < 0) return;   // no wanted parameter behind this op
        const std::vector<int> gs = apply(i, grad);
        const std::vector<int> inputs = g_.op(i).inputs;
        for (std::size_t s = 0; s < gs.size(); ++s) {
            if (gs[s] < 0) continue;
            const auto t = static_cast<std::size_t>(inputs[s]);
            const int producer = g_.tensors[t].producer;
            if (producer >= 0 && visited_[static_cast<std::size_t>(producer)]) {
                g_.dropped_contributions.emplace_back(i, static_cast<int>(s));   // written after its visit
                continue;
            }
            if (assigned_[t] >= 0 && writer_[t].first >= 0) g_.dropped_contributions.push_back(writer_[t]);   // overwritten
            assigned_[t] = gs[s];
            writer_[t] = {i, static_cast<int>(s)};
        }
        for (std::size_t s = inputs.size(); s-- > 0;) {
            const int producer = g_.tensors[static_cast<std::size_t>(inputs[s])].producer;
            if (producer >= 0 && !visited_[static_cast<std::size_t>(producer)]) visit(producer);
        }
    }

    TrainingGraph& g_;
    GraphBuilder b_;
    RuleContext ctx_;
    AutodiffMode mode_;
    std::vector<char> req_;
    std::vector<int> assigned_;
    std::vector<std::pair<int, int>> writer_;
    std::vector<char> visited_;
};

bool isClassifierDummy(const Tensor& p)
{
    return endsWith(p.name, "_scale") || endsWith(p.name, "_zero_x") || endsWith(p.name, "_zero_y");
}

}  // namespace

bool selectOutputs(TrainingGraph& g, const Network& net, const ResolvedScheme& scheme)
{
    const int headLayer = net.convLayers().back();
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const ConvUpdate& u = scheme.conv(ci);
        const int layer = net.convLayers()[static_cast<std::size_t>(ci)];
        const int k = g.mode == AutodiffMode::Reference ? u.k_compiler : u.k;
        const int cin = net.conv(ci).cin;
        const int built = g.weight_channels[static_cast<std::size_t>(layer)];
        if (u.weight() && (k >= cin ? cin : k) != (built == 0 ? cin : built)) return false;
    }
    g.outputs.resize(1);   // keep the loss
    for (auto it = g.parameter_order.rbegin(); it != g.parameter_order.rend(); ++it) {
        const Tensor& p = g.tensor(*it);
        const int grad = g.parameter_gradient[static_cast<std::size_t>(*it)];
        if (p.layer < 0 || grad < 0) continue;
        const Layer& l = net.layer(p.layer);
        if (l.kind != LayerKind::Conv) continue;
        const ConvUpdate& u = scheme.conv(l.conv_index);
        GraphOutput out{grad, p.name, GradientKind::Bias, p.layer, l.conv_index};
        if (endsWith(p.name, "_bias")) {
            if (!u.bias) continue;
        } else if (endsWith(p.name, "_weight")) {
            if (!u.weight()) continue;
            out.kind = GradientKind::Weight;
        } else if (g.mode == AutodiffMode::Reference && p.layer == headLayer && isClassifierDummy(p)) {
            out.kind = GradientKind::Zero;
        } else {
            continue;
        }
        g.outputs.push_back(out);
    }
    eliminateDeadCode(g);
    return true;
}

TrainingGraph buildTrainingGraph(const Network& net, const ResolvedScheme& scheme, AutodiffMode mode)
{
    TrainingGraph g = lowerForward(net);
    g.mode = mode;
    g.weight_channels.assign(net.layers.size(), 0);
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const ConvUpdate& u = scheme.conv(ci);
        const int k = mode == AutodiffMode::Reference ? u.k_compiler : u.k;
        if (u.weight() && k < net.conv(ci).cin)
            g.weight_channels[static_cast<std::size_t>(net.convLayers()[static_cast<std::size_t>(ci)])] = k;
    }
    g.parameter_order = parameterOrder(g);

    // Every conv's weight and bias gets its backward ops (so views can show what the scheme
    // prunes); reference mode also asks for the classifier's dummy zero gradients.
    std::vector<char> want(g.tensors.size(), 0);
    const int headLayer = net.convLayers().back();
    for (int t : g.parameter_order) {
        const Tensor& p = g.tensor(t);
        if (p.layer < 0) continue;
        if (endsWith(p.name, "_weight") || endsWith(p.name, "_bias") ||
            (mode == AutodiffMode::Reference && p.layer == headLayer && isClassifierDummy(p)))
            want[static_cast<std::size_t>(t)] = 1;
    }
    Walk(g, mode, want).run();
    selectOutputs(g, net, scheme);
    return g;
}

}  // namespace tinyscope
