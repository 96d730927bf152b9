#include "tinyengine/GraphImport.h"

#include "Error.h"
#include "io/JsonFile.h"
#include "io/Text.h"
#include "tinyengine/GraphJson.h"
#include "zoo/NetworkBuilder.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tinyscope {

namespace {

std::string stripSuffix(const std::string& s, const std::string& suffix)
{
    return endsWith(s, suffix) ? s.substr(0, s.size() - suffix.size()) : s;
}

// "v9_conv_0" -> 8 (tiny-training numbers blocks from v1); -1 outside blocks.
int blockOf(const std::string& prefix)
{
    if (prefix.size() < 2 || prefix[0] != 'v') return -1;
    std::size_t i = 1;
    while (i < prefix.size() && std::isdigit(static_cast<unsigned char>(prefix[i]))) ++i;
    if (i == 1) return -1;
    const std::string rest = prefix.substr(i);
    if (rest.rfind("_conv_", 0) != 0 && rest.rfind("_qadd", 0) != 0 && rest.rfind("_qmul", 0) != 0) return -1;
    return std::stoi(prefix.substr(1, i - 1)) - 1;
}

std::string fileStem(const std::string& path)
{
    std::string s = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    s = stripSuffix(s, ".json");
    return stripSuffix(s, "-graph");
}

}  // namespace

Network recoverNetwork(TrainingGraph& g, const std::string& name, const QuantizedParams* params)
{
    Shape3 in;
    const Tensor& x = g.tensor(g.input);
    if (x.shape.size() != 4) throw InputError(name + ": the network input must be [1, C, H, W], got " + formatList(x.shape));
    in = {x.shape[1], x.shape[2], x.shape[3]};
    NetworkBuilder b(name, in);
    std::map<int, int> layerOf;   // tensor id -> Network layer (-1 = network input)
    layerOf[g.input] = -1;
    auto src = [&](int op, int tensor) {
        auto it = layerOf.find(tensor);
        if (it == layerOf.end()) throw InputError(name + ": op " + std::to_string(op) + ": its input is not the output of a forward layer");
        return it->second;
    };
    auto paramName = [&](int op, int slot, const char* suffix) {
        const Tensor& t = g.tensor(g.op(op).inputs[static_cast<std::size_t>(slot)]);
        if (t.kind != TensorKind::Parameter) throw InputError(name + ": op " + std::to_string(op) + ": inputs[" + std::to_string(slot) + "] must be a parameter");
        if (!endsWith(t.name, suffix))
            throw InputError(name + ": op " + std::to_string(op) + ": inputs[" + std::to_string(slot) + "].name '" + t.name + "' should end in " + suffix);
        return t.name;
    };

    // First pass: which convs exist (roles need the next conv of the block).
    std::vector<int> convOps;
    for (int i = 0; i < g.forward_ops; ++i)
        if (g.op(i).kind == OpKind::McuConv2d) convOps.push_back(i);
    if (convOps.empty()) throw InputError(name + ": the graph has no nn.mcuconv2d");
    int layers = 0;
    std::vector<int> opLayer(g.ops.size(), -1);
    std::size_t nextConv = 0;
    for (int i = 0; i < g.forward_ops; ++i) {
        const Op& op = g.op(i);
        const Tensor& out = g.tensor(op.output);
        int layer = -1;
        switch (op.kind) {
        case OpKind::McuConv2d: {
            if (op.inputs.size() != 6) throw InputError(name + ": op " + std::to_string(i) + ": nn.mcuconv2d needs 6 inputs, got " + std::to_string(op.inputs.size()));
            const std::string prefix = stripSuffix(paramName(i, 1, "_weight"), "_weight");
            const TensorShape& ws = g.tensor(op.inputs[1]).shape;
            if (ws.size() != 4) throw InputError(name + ": op " + std::to_string(i) + ": inputs[1].shape: a weight is OIHW");
            const std::size_t ci = nextConv++;   // convOps holds the conv ops in this loop's order
            const int from = src(i, op.inputs[0]);
            const Shape3 xin = b.shape(from);
            const int groups = op.attrs.value("groups", 1);
            const bool dw = groups > 1 && groups == xin.c && groups == ws[0];
            const bool last = ci + 1 == convOps.size();
            std::string role = "conv";
            const int block = blockOf(prefix);
            if (ci == 0) role = "stem";
            else if (last) role = "classifier";
            else if (dw) role = "dw";
            else if (block >= 0) {
                bool beforeDw = false;
                if (ci + 1 < convOps.size()) {
                    const Op& next = g.op(convOps[ci + 1]);
                    const std::string np = stripSuffix(g.tensor(next.inputs[1]).name, "_weight");
                    beforeDw = blockOf(np) == block && next.attrs.value("groups", 1) > 1;
                }
                role = beforeDw ? "pw1" : "pw2";
            }
            ConvSpec s = ConvSpec::of(ci == 0 ? "first_conv" : last ? "classifier" : block >= 0 ? "blocks." + std::to_string(block) + "." + role : prefix,
                                      role, prefix, block, ws[0]);
            s.kh = ws[2];
            s.kw = ws[3];
            try {
                s.stride_h = op.attrs.at("strides")[0].get<int>();
                s.stride_w = op.attrs.at("strides")[1].get<int>();
                s.pad_t = op.attrs.at("padding")[0].get<int>();
                s.pad_l = op.attrs.at("padding")[1].get<int>();
                s.pad_b = op.attrs.at("padding")[2].get<int>();
                s.pad_r = op.attrs.at("padding")[3].get<int>();
            } catch (const std::exception&) {
                throw InputError(name + ": op " + std::to_string(i) + ": attrs: nn.mcuconv2d needs strides [2] and padding [4]");
            }
            s.groups = groups;
            s.bias = true;
            if (last && xin.h == 1 && xin.w == 1 && s.kh == 1 && s.kw == 1) s.linear = true;
            if (params && params->has(prefix + "_zero_y") && params->value(prefix + "_zero_y") == -128) s.act = Activation::ReLU6;
            if (ws[1] * groups != xin.c)
                throw InputError(name + ": op " + std::to_string(i) + ": inputs[1].shape " + formatList(ws) + " does not fit " +
                                 std::to_string(xin.c) + " input channels in " + std::to_string(groups) + " groups");
            layer = b.conv(from, s);
            break;
        }
        case OpKind::McuAdd:
        case OpKind::McuMultiply: {
            if (op.inputs.size() != 8) throw InputError(name + ": op " + std::to_string(i) + ": " + opTypeName(op.kind) + " needs 8 inputs");
            const std::string prefix = stripSuffix(paramName(i, 2, "_zero_x1"), "_zero_x1");
            const int block = blockOf(prefix);
            const int a = src(i, op.inputs[0]), c = src(i, op.inputs[1]);
            if (op.kind == OpKind::McuAdd) layer = b.add(a, c, block >= 0 ? "blocks." + std::to_string(block) + ".add" : prefix, prefix, block);
            else layer = b.channelScale(a, c, block >= 0 ? "blocks." + std::to_string(block) + ".se.scale" : prefix, prefix, block);
            break;
        }
        case OpKind::McuMean:
            layer = b.globalAvgPool(src(i, op.inputs[0]), "pool" + (layers ? "." + std::to_string(layers) : std::string()));
            break;
        case OpKind::McuTruncate:
            layerOf[op.output] = src(i, op.inputs[0]);
            opLayer[static_cast<std::size_t>(i)] = layerOf[op.output];
            continue;
        default:
            continue;   // the loss
        }
        ++layers;
        const Shape3 got = b.shape(layer);
        if (out.shape.size() != 4 || out.shape[1] != got.c || out.shape[2] != got.h || out.shape[3] != got.w)
            throw InputError(name + ": op " + std::to_string(i) + ": outputs[0].shape " + formatList(out.shape) + " does not follow from its inputs and attrs (expected [1, " +
                             std::to_string(got.c) + ", " + std::to_string(got.h) + ", " + std::to_string(got.w) + "])");
        layerOf[op.output] = layer;
        opLayer[static_cast<std::size_t>(i)] = layer;
        for (int t : op.inputs)
            if (g.tensor(t).kind == TensorKind::Parameter && t != g.input) g.tensors[static_cast<std::size_t>(t)].layer = layer;
    }
    int classes = 0;
    {
        const Tensor& w = g.tensor(g.op(convOps.back()).inputs[1]);
        classes = w.shape[0];
    }
    bool ce = false;
    for (int i = 0; i < g.forward_ops; ++i) ce |= g.op(i).kind == OpKind::CrossEntropyWithLogits;
    Network net = b.finish(classes, ce ? LossKind::CrossEntropy : LossKind::MeanSquaredError, "imported TinyEngine training graph", name);

    // Layers of the remaining ops: the loss follows the classifier; a backward op belongs to the
    // first input with a known layer (a parameter's, or its producer's).
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
        Op& op = g.ops[static_cast<std::size_t>(i)];
        if (opLayer[static_cast<std::size_t>(i)] >= 0) {
            op.layer = opLayer[static_cast<std::size_t>(i)];
            continue;
        }
        int layer = -1;
        for (int t : op.inputs) {
            const Tensor& tt = g.tensor(t);
            if (tt.kind == TensorKind::Parameter && tt.layer >= 0) layer = tt.layer;
            else if (tt.kind == TensorKind::Activation) layer = opLayer[static_cast<std::size_t>(tt.producer)];
            if (layer >= 0) break;
        }
        if (layer < 0 && i < g.forward_ops) layer = net.convLayers().back();
        opLayer[static_cast<std::size_t>(i)] = layer;
        op.layer = layer;
    }
    g.model = name;
    g.weight_channels.assign(net.layers.size(), 0);
    return net;
}

namespace {

// A channel count k of C as the ratio the scheme keys use: the allowed ratio whose count (the
// algorithm's int(r·C) or the compiler's round(r·C)) is k, else k/C exactly.
double ratioFor(int k, int c)
{
    for (double r : {1.0, 0.5, 0.25, 0.125})
        if (static_cast<int>(r * c) == k || static_cast<int>(std::nearbyint(r * c)) == k) return r;
    return static_cast<double>(k) / c;
}

}  // namespace

SparseScheme recoverScheme(const TrainingGraph& g, const Network& net, std::vector<std::string>* notes)
{
    const int nb = net.numBackboneConvs();
    std::vector<char> bias(static_cast<std::size_t>(nb), 0);
    std::map<int, double> weights;
    const auto parameters = g.parameterIndex();
    for (const GraphOutput& o : g.outputs) {
        if (o.kind != GradientKind::Bias && o.kind != GradientKind::Weight) continue;
        const auto found = parameters.find(o.info);
        const int p = found == parameters.end() ? -1 : found->second;
        if (p < 0) {
            if (notes) notes->push_back("gradient output '" + o.info + "' names no parameter of the graph");
            continue;
        }
        const int layer = g.tensor(p).layer;
        if (layer < 0 || !net.layer(layer).isConv()) continue;
        const Layer& l = net.layer(layer);
        if (l.conv_index >= nb) continue;   // the classifier is always updated
        if (o.kind == GradientKind::Bias) {
            bias[static_cast<std::size_t>(l.conv_index)] = 1;
        } else {
            const TensorShape& s = g.tensor(o.tensor).shape;
            const int k = l.depthwise() ? s[0] : s[1];
            weights[l.conv_index] = ratioFor(k, l.depthwise() ? l.cout : l.cin);
        }
    }
    SparseScheme s;
    int first = nb;
    while (first > 0 && bias[static_cast<std::size_t>(first - 1)]) --first;
    s.n_bias_update = nb - first;
    for (int i = 0; i < first; ++i)
        if (bias[static_cast<std::size_t>(i)] && notes)
            notes->push_back("bias of conv " + std::to_string(i) + " is updated outside the tail of " + std::to_string(s.n_bias_update) +
                             " (n_bias_update cannot say so)");
    for (const auto& [idx, r] : weights) {
        s.manual_weight_idx.push_back(idx);
        s.weight_update_ratio.push_back(r);
        if (notes && idx < first) notes->push_back("weight of conv " + std::to_string(idx) + " is updated outside the bias tail");
        if (notes && !isAllowedRatio(r)) notes->push_back("conv " + std::to_string(idx) + ": ratio " + std::to_string(r) + " is not one of 0, 1/8, 1/4, 1/2, 1");
    }
    return s;
}

Json ImportedGraph::summaryJson() const
{
    const TrainingGraph& g = graph;
    Json j;
    j["source"] = source;
    j["model"] = g.model;
    j["ops"] = g.ops.size();
    j["forward_ops"] = g.forward_ops;
    j["backward_ops"] = static_cast<int>(g.ops.size()) - g.forward_ops;
    j["mode"] = autodiffModeName(g.mode);
    Json outs = Json::array();
    const auto parameters = g.parameterIndex();
    for (const GraphOutput& o : g.outputs) {
        const Tensor& t = g.tensor(o.tensor);
        const char* kind = o.kind == GradientKind::Loss ? "loss" : o.kind == GradientKind::Bias ? "bias" : o.kind == GradientKind::Weight ? "weight" : "zero";
        Json e{{"op", t.producer}, {"type", opTypeName(g.op(t.producer).kind)}, {"output_info", o.info}, {"kind", kind},
               {"shape", t.shape}, {"dtype", dtypeName(t.dtype)}};
        const auto found = parameters.find(o.info);
        const int p = found == parameters.end() ? -1 : found->second;
        if (p >= 0 && g.tensor(p).layer >= 0 && network.layer(g.tensor(p).layer).isConv())
            e["conv_index"] = network.layer(g.tensor(p).layer).conv_index;
        outs.push_back(e);
    }
    j["outputs"] = outs;
    std::map<std::string, int> counts;
    for (const Op& op : g.ops) ++counts[opTypeName(op.kind)];
    j["op_type_counts"] = counts;
    j["n_bias_update"] = scheme.n_bias_update;
    j["manual_weight_idx"] = scheme.manual_weight_idx;
    j["weight_update_ratio"] = scheme.weight_update_ratio;
    j["network"] = {{"convs", network.numConvs()}, {"params", network.params()}, {"macs", network.macs()},
                    {"input", {network.input.c, network.input.h, network.input.w}}, {"classes", network.num_outputs}};
    j["notes"] = notes;
    j["params_file"] = params ? Json(params->source) : Json(nullptr);
    return j;
}

ImportedGraph importTinyEngineGraph(const std::string& graphPath, const std::string& paramsPath, const std::string& scalesPath)
{
    ImportedGraph r;
    r.source = graphPath;
    r.graph = readGraphJson(readJsonFile(graphPath), graphPath);
    if (!paramsPath.empty()) {
        r.params = readParamsPickle(paramsPath);
        const std::vector<std::string> bad = paramsMismatches(r.graph, *r.params);
        if (!bad.empty()) throw InputError(paramsPath + ": " + bad.front() + (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : ""));
    }
    if (!scalesPath.empty()) {
        if (!r.params) {
            r.params = QuantizedParams{};
            r.params->source = scalesPath;
        }
        r.params->scales = readScaleJson(scalesPath);
    }
    r.network = recoverNetwork(r.graph, fileStem(graphPath), r.params ? &*r.params : nullptr);
    r.scheme = recoverScheme(r.graph, r.network, &r.notes);
    return r;
}

}  // namespace tinyscope
