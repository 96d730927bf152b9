#include "nn/quantize/GradientCheck.h"

#include "nn/quantize/FakeQuantAutograd.h"

#include <algorithm>
#include <cmath>

namespace tinyscope {

namespace {

// The first k channels along `dim` (0 or 1) of an OIHW tensor.
std::vector<float> leadingChannels(const std::vector<float>& w, int O, int I, int hw, int dim, int k)
{
    std::vector<float> out;
    for (int o = 0; o < (dim == 0 ? k : O); ++o)
        for (int i = 0; i < (dim == 1 ? k : I); ++i)
            for (int p = 0; p < hw; ++p) out.push_back(w[static_cast<std::size_t>((o * I + i) * hw + p)]);
    return out;
}

}  // namespace

double GradientCheckResult::maxRelativeError() const
{
    double e = 0;
    for (const GradientComparison& c : gradients) e = std::max(e, c.relative_error);
    return e;
}

int GradientCheckResult::allZero() const
{
    return static_cast<int>(std::count_if(gradients.begin(), gradients.end(), [](const GradientComparison& c) { return c.scale == 0; }));
}

GradientCheckResult checkGradients(const TrainingGraph& g, const Network& net, const ResolvedScheme& scheme,
                                   const ParameterStore& params)
{
    GraphInterpreter run(g);
    run.bind(params);
    run.run();
    const bool reference = g.mode == AutodiffMode::Reference;
    const AutogradResult ref = fakeQuantAutograd(g, params, reference ? FakeQuantSemantics::Reference : FakeQuantSemantics::Exact);
    GradientCheckResult result;
    result.loss = run.loss();
    result.reference_loss = ref.loss;
    for (const GraphOutput& o : g.outputs) {
        if (o.kind != GradientKind::Bias && o.kind != GradientKind::Weight) continue;
        const std::vector<float>& got = run.value(o.tensor);
        std::vector<float> want = ref.gradients.at(o.info);
        if (o.kind == GradientKind::Weight) {
            const Layer& l = net.layer(o.layer);
            const ConvUpdate& u = scheme.conv(l.conv_index);
            const int k = reference ? u.k_compiler : u.k;
            if (k < l.cin) want = leadingChannels(want, l.cout, l.cin / l.groups, l.kh * l.kw, l.depthwise() ? 0 : 1, k);
        }
        GradientComparison c;
        c.name = o.info;
        double diff = 0;
        for (std::size_t i = 0; i < want.size(); ++i) {
            const double w = want[i], gv = i < got.size() ? got[i] : 0.0;
            diff = std::max(diff, std::fabs(gv - w));
            c.scale = std::max(c.scale, std::fabs(w));
        }
        c.relative_error = got.size() != want.size() ? 1.0 : c.scale > 0 ? diff / c.scale : diff;
        result.gradients.push_back(c);
    }
    return result;
}

}  // namespace tinyscope
