#include "tinyengine/TinyEngineTrainingStep.h"

#include "tinyengine/QasFactors.h"

#include "Error.h"
#include "graph/GraphInterpreter.h"
#include "tinyengine/Int8Forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tinyscope {

namespace {

// "v9_conv_0_weight" → "v9_conv_0" (QAS_util: every component but the last).
std::string prefixOf(const std::string& name)
{
    const auto cut = name.rfind('_');
    return cut == std::string::npos ? name : name.substr(0, cut);
}

// The effective scale of the conv that reads `param` (QAS_util.get_effective_scalename_with_input_key:
// input 5 of the op that has it as an input).
std::vector<float> effectiveScale(const TrainingGraph& g, const QuantizedParams& p, int tensor)
{
    for (const Op& op : g.ops)
        if (op.kind == OpKind::McuConv2d && op.inputs.size() > 5)
            for (int in : op.inputs)
                if (in == tensor) return p.floats(g.tensor(op.inputs[5]).name);
    throw InputError(g.tensor(tensor).name + ": no nn.mcuconv2d reads it (no effective scale for its QAS factor)");
}

// float32 → int32 as the Cortex-M's VCVT does: toward zero, saturating.
std::int32_t truncSaturate(float f)
{
    if (std::isnan(f)) return 0;
    if (f >= 2147483648.0f) return std::numeric_limits<std::int32_t>::max();
    if (f < -2147483648.0f) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(f);
}

void storeElement(NdArray& a, std::int64_t i, std::int64_t v)
{
    if (a.dtype == ScalarType::Int8) {
        const std::int8_t b = static_cast<std::int8_t>(v);
        std::memcpy(&a.data[static_cast<std::size_t>(i)], &b, 1);
    } else if (a.dtype == ScalarType::Int32) {
        const std::int32_t w = static_cast<std::int32_t>(v);
        std::memcpy(&a.data[static_cast<std::size_t>(i) * 4], &w, 4);
    } else {
        throw InputError(std::string("a trained parameter of dtype ") + scalarName(a.dtype) + " (TinyEngine updates int8 weights and int32 biases)");
    }
}

}  // namespace

bool ParameterStep::allows(std::size_t i, std::int64_t value) const
{
    if (i >= after.size()) return false;
    if (after[i] == value) return true;
    if (dtype != DType::Int8) return low[i] <= value && value <= high[i];
    if (high[i] - low[i] >= 255) return true;   // every byte is an outcome
    for (std::int64_t n = low[i]; n <= high[i]; ++n)
        if (static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::uint64_t>(n) & 0xffu)) == value) return true;
    return false;
}

void setStepLayoutValues(const TrainingGraph& g, QuantizedParams& params, const std::string& name, int channels,
                         const std::vector<std::int64_t>& values)
{
    const int pt = g.findParameter(name);
    if (pt < 0) throw InputError("'" + name + "' is not a parameter of the graph");
    const TensorShape& ws = g.tensor(pt).shape;
    NdArray& a = params.arrays.at(name);
    if (channels == 0) {
        if (static_cast<std::int64_t>(values.size()) != a.numel())
            throw InputError(name + ": " + std::to_string(values.size()) + " values for " + std::to_string(a.numel()));
        for (std::size_t i = 0; i < values.size(); ++i) storeElement(a, static_cast<std::int64_t>(i), values[i]);
        return;
    }
    if (ws.size() != 4 || channels > ws[1] || static_cast<std::int64_t>(values.size()) != static_cast<std::int64_t>(ws[0]) * channels * ws[2] * ws[3])
        throw InputError(name + ": " + std::to_string(values.size()) + " values do not fill its first " + std::to_string(channels) + " input channels");
    const int O = ws[0], I = ws[1], KH = ws[2], KW = ws[3];
    std::size_t n = 0;
    for (int o = 0; o < O; ++o)
        for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw)
                for (int i = 0; i < channels; ++i) storeElement(a, ((static_cast<std::int64_t>(o) * I + i) * KH + kh) * KW + kw, values[n++]);
}

TrainingStepResult tinyEngineTrainingStep(const TrainingGraph& g, QuantizedParams& params, const std::vector<std::int8_t>& image, int label)
{
    const Int8Forward forward(g, params, Int8Arithmetic::TinyEngine);
    if (label < 0 || label >= forward.classes())
        throw InputError("label " + std::to_string(label) + " outside 0.." + std::to_string(forward.classes() - 1));
    const std::vector<std::vector<std::int32_t>> fwd = forward.runAll(image);

    GraphInterpreter run(g);
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const Tensor& tt = g.tensors[t];
        if (tt.kind != TensorKind::Parameter || static_cast<int>(t) == g.input || static_cast<int>(t) == g.label) continue;
        if (params.has(tt.name)) run.bind(static_cast<int>(t), params.floats(tt.name));
    }
    run.bind(g.input, std::vector<float>(image.begin(), image.end()));
    std::vector<float> onehot(static_cast<std::size_t>(g.tensor(g.label).elems()), 0.f);
    if (static_cast<std::size_t>(label) >= onehot.size()) throw InputError("the graph's label has " + std::to_string(onehot.size()) + " classes");
    onehot[static_cast<std::size_t>(label)] = 1.f;
    run.bind(g.label, onehot);

    // The forward's values from TinyEngine's arithmetic; the loss and backward from the graph.
    for (int i : g.order) {
        const Op& op = g.op(i);
        const std::vector<std::int32_t>& v = fwd[static_cast<std::size_t>(op.output)];
        if (op.phase == Phase::Forward && static_cast<std::int64_t>(v.size()) == g.tensor(op.output).elems())
            run.bind(op.output, std::vector<float>(v.begin(), v.end()));
        else
            run.execute(i);
    }

    TrainingStepResult r;
    const std::vector<std::int32_t>& logits = fwd[static_cast<std::size_t>(forward.logitsTensor())];
    r.logits.assign(logits.begin(), logits.end());
    r.loss = run.loss();
    const auto parameters = g.parameterIndex();
    for (const GraphOutput& out : g.outputs) {
        if (out.kind != GradientKind::Bias && out.kind != GradientKind::Weight) continue;
        const auto found = parameters.find(out.info);
        const int pt = found == parameters.end() ? -1 : found->second;
        if (pt < 0) throw InputError("gradient output '" + out.info + "' names no parameter of the graph");
        const Tensor& P = g.tensor(pt);
        if (!params.has(out.info)) throw InputError(params.source + ": no array '" + out.info + "' for the parameter the step updates");
        NdArray& a = params.arrays.at(out.info);
        const std::vector<float>& grad = run.value(out.tensor);
        const std::string prefix = prefixOf(out.info);
        const std::vector<float> eff = effectiveScale(g, params, pt);
        const float sy = static_cast<float>(params.scale(prefix + "_y_scale", out.info, "the QAS factor of its update needs it"));
        ParameterStep s;
        s.name = out.info;
        if (out.kind == GradientKind::Bias) {
            s.dtype = DType::Int32;
            const std::size_t O = static_cast<std::size_t>(P.elems());
            if (grad.size() != O || eff.size() != O)
                throw InputError(out.info + ": gradient of " + std::to_string(grad.size()) + " values for a bias of " + std::to_string(O));
            for (std::size_t o = 0; o < O; ++o) {
                const float qas = qasBiasFactor(eff[o], sy);
                const std::int64_t b = static_cast<std::int64_t>(ndValue(a, static_cast<std::int64_t>(o)));
                const float update = grad[o] * kTinyEngineBlr * qas;
                const std::int32_t step = truncSaturate(update);
                const std::int64_t s1 = truncSaturate(static_cast<float>(update * (1 - kGradientTolerance)));
                const std::int64_t s2 = truncSaturate(static_cast<float>(update * (1 + kGradientTolerance)));
                s.low.push_back(b - std::max(s1, s2));
                s.high.push_back(b - std::min(s1, s2));
                const std::int64_t nb = static_cast<std::int32_t>(static_cast<std::uint32_t>(b) - static_cast<std::uint32_t>(step));
                s.before.push_back(b);
                s.after.push_back(nb);
                s.gradient.push_back(grad[o]);
                s.qas.push_back(qas);
                storeElement(a, static_cast<std::int64_t>(o), nb);
            }
        } else {
            s.dtype = DType::Int8;
            const TensorShape& ws = P.shape;   // [O, I, KH, KW]
            const TensorShape& gs = g.tensor(out.tensor).shape;
            if (ws.size() != 4 || gs.size() != 4 || gs[0] != ws[0] || gs[2] != ws[2] || gs[3] != ws[3] || gs[1] > ws[1])
                throw InputError(out.info + ": weight-gradient shape does not fit the weight's");
            const float sx = static_cast<float>(params.scale(prefix + "_x_scale", out.info, "the QAS factor of its update needs it"));
            const int O = ws[0], I = ws[1], KH = ws[2], KW = ws[3], k = gs[1];
            s.channels = k;
            for (int o = 0; o < O; ++o) {
                const float qas = qasWeightFactor(eff[static_cast<std::size_t>(o)], sy, sx);
                for (int kh = 0; kh < KH; ++kh)
                    for (int kw = 0; kw < KW; ++kw)
                        for (int i = 0; i < k; ++i) {   // OHWI over the first k input channels
                            const std::int64_t wi = ((static_cast<std::int64_t>(o) * I + i) * KH + kh) * KW + kw;
                            const std::size_t gi = static_cast<std::size_t>(((static_cast<std::int64_t>(o) * k + i) * KH + kh) * KW + kw);
                            const std::int64_t w = static_cast<std::int64_t>(ndValue(a, wi));
                            const float update = grad[gi] * qas * kTinyEngineLr;
                            const float f = static_cast<float>(w) - update;
                            const std::int32_t t = truncSaturate(f);
                            const std::int64_t t1 = truncSaturate(static_cast<float>(w) - static_cast<float>(update * (1 - kGradientTolerance)));
                            const std::int64_t t2 = truncSaturate(static_cast<float>(w) - static_cast<float>(update * (1 + kGradientTolerance)));
                            s.low.push_back(std::min(t1, t2));
                            s.high.push_back(std::max(t1, t2));
                            if (t < -128 || t > 127) ++s.wrapped;
                            const std::int64_t nw = static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::uint32_t>(t) & 0xffu));
                            s.before.push_back(w);
                            s.after.push_back(nw);
                            s.gradient.push_back(grad[gi]);
                            s.qas.push_back(qas);
                            storeElement(a, wi, nw);
                        }
            }
        }
        r.params.push_back(std::move(s));
    }
    return r;
}

std::vector<std::int64_t> tinyEngineBiasFoldResidual(const TrainingGraph& g, const QuantizedParams& params, const std::string& bias)
{
    const int bt = g.findParameter(bias);
    for (const Op& op : g.ops) {
        if (op.kind != OpKind::McuConv2d || op.inputs.size() < 4 || op.inputs[2] != bt || bt < 0) continue;
        const Tensor& W = g.tensor(op.inputs[1]);   // [O, I/groups, KH, KW]
        const std::int64_t zx = static_cast<std::int64_t>(params.value(g.tensor(op.inputs[3]).name));
        const std::int64_t O = W.shape.at(0), per = W.elems() / O;
        std::vector<std::int64_t> r(static_cast<std::size_t>(O));
        for (std::int64_t o = 0; o < O; ++o) {
            std::int64_t sum = 0;
            for (std::int64_t k = 0; k < per; ++k) sum += static_cast<std::int64_t>(params.value(W.name, o * per + k));
            const std::int64_t f = static_cast<std::int64_t>(params.value(bias, o)) - sum * zx;
            const std::int64_t clipped = std::min<std::int64_t>(std::max<std::int64_t>(f, std::numeric_limits<std::int32_t>::min()), std::numeric_limits<std::int32_t>::max());
            r[static_cast<std::size_t>(o)] = f - clipped;
        }
        return r;
    }
    throw InputError("'" + bias + "' is not the bias of an nn.mcuconv2d of the graph");
}

}  // namespace tinyscope
