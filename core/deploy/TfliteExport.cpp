#include "deploy/TfliteExport.h"
#include "deploy/TfliteLayout.h"

#include "Error.h"
#include "graph/ForwardLowering.h"
#include "io/AtomicFile.h"
#include "tinyengine/TfliteArithmetic.h"
#include "tflite_subset_generated.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <sstream>

namespace tinyscope {

namespace {

const char* builtinName(tflite::BuiltinOperator op) { return tflite::EnumNameBuiltinOperator(op); }

// The operator version TFLite's converter writes for the int8 form of each op.
int opVersion(tflite::BuiltinOperator op)
{
    switch (op) {
    case tflite::BuiltinOperator_CONV_2D: return 3;             // per-channel int8
    case tflite::BuiltinOperator_DEPTHWISE_CONV_2D: return 3;   // per-channel int8
    case tflite::BuiltinOperator_FULLY_CONNECTED: return 4;     // int8
    case tflite::BuiltinOperator_PAD: return 3;                 // int8
    case tflite::BuiltinOperator_RESHAPE: return 1;
    default: return 2;                                          // ADD, MUL, AVERAGE_POOL_2D int8
    }
}

std::string layerWhere(const Network& net, int i)
{
    const Layer& l = net.layer(i);
    return "layer " + std::to_string(i) + " '" + l.name + "' (" + layerKindName(l.kind) + ")";
}

// Quantization of one activation tensor class (tensors that must share it: a pool's or a
// reshape's input and output). Hard constraints come from ops whose integer arithmetic uses the
// value as is (zero points everywhere; the scales of ADD / MUL); a conv's x/y scale is soft
// (the per-channel weight scale absorbs it: s_w = s_eff·s_y/s_x).
struct QuantClass {
    bool zeroSet = false, hardScale = false;
    int zero = 0;
    double scale = 0;
    std::string zeroWho, scaleWho;
    double softProducer = 0, softConsumer = 0;
};

bool sameScale(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b)); }

// TFLite's quantized activation range for a fused activation (CalculateActivationRangeQuantized).
std::pair<int, int> fusedRange(tflite::ActivationFunctionType a, double scale, int zero)
{
    auto q = [&](double f) {   // zero + round(f / scale), kept inside int
        const double v = static_cast<double>(zero) + std::round(f / scale);
        return v > 1e6 ? 1000000 : v < -1e6 ? -1000000 : static_cast<int>(v);
    };
    switch (a) {
    case tflite::ActivationFunctionType_RELU: return {std::max(-128, q(0.0)), 127};
    case tflite::ActivationFunctionType_RELU6: return {std::max(-128, q(0.0)), std::min(127, q(6.0))};
    default: return {-128, 127};
    }
}

// Our int8 semantics clamp every layer output to [-128, 127] (the activation lives in the output
// quantization). The layer's own activation is written as the fused one when TFLite's range for
// it is that same [-128, 127]; otherwise NONE, which is our clamp.
tflite::ActivationFunctionType fusedActivation(Activation act, double scale, int zero)
{
    tflite::ActivationFunctionType a = tflite::ActivationFunctionType_NONE;
    if (act == Activation::ReLU) a = tflite::ActivationFunctionType_RELU;
    if (act == Activation::ReLU6) a = tflite::ActivationFunctionType_RELU6;
    return fusedRange(a, scale, zero) == std::pair<int, int>{-128, 127} ? a : tflite::ActivationFunctionType_NONE;
}

struct Padding {
    tflite::Padding padding = tflite::Padding_VALID;
    bool explicitPad = false;   // a PAD op first, then VALID
    std::string why;
};

Padding paddingOf(const Layer& l)
{
    Padding p;
    switch (tflitePaddingOf(l)) {
    case TflitePadding::Valid: return p;
    case TflitePadding::Same: p.padding = tflite::Padding_SAME; return p;
    case TflitePadding::ExplicitPad: break;
    }
    const auto [st, sb] = tfliteSamePads(l.in.h, l.kh, l.stride_h);
    const auto [sl, sr] = tfliteSamePads(l.in.w, l.kw, l.stride_w);
    p.explicitPad = true;
    std::ostringstream why;
    why << "SAME would pad (top " << st << ", bottom " << sb << ", left " << sl << ", right " << sr << "), the layer pads (" << l.pad_t << ", "
        << l.pad_b << ", " << l.pad_l << ", " << l.pad_r << ")";
    p.why = why.str();
    return p;
}

std::vector<std::int32_t> intsOf(const NdArray& a)
{
    std::vector<std::int32_t> v(static_cast<std::size_t>(a.numel()));
    for (std::int64_t i = 0; i < a.numel(); ++i) v[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(ndValue(a, i));
    return v;
}


}  // namespace

Json TfliteTensorInfo::toJson() const { return Json{{"shape", shape}, {"scale", scale}, {"zero_point", zero_point}}; }

Json TfliteModel::toJson() const
{
    return Json{{"format", "tflite"}, {"bytes", bytes.size()}, {"ops", ops}, {"input", input.toJson()}, {"output", output.toJson()}};
}

std::string tfliteObstacle(const Network& net)
{
    for (int i = 0; i < static_cast<int>(net.layers.size()); ++i) {
        const Layer& l = net.layer(i);
        switch (l.kind) {
        case LayerKind::Conv:
            if (l.act == Activation::GELU) return layerWhere(net, i) + ": GELU has no int8 form in TFLite's builtin ops that TFLM implements";
            if (l.groups != 1 && !l.depthwise())
                return layerWhere(net, i) + ": a grouped conv (groups " + std::to_string(l.groups) +
                       ") is neither CONV_2D nor DEPTHWISE_CONV_2D in TFLM's reference kernels";
            if (l.pad_t < 0 || l.pad_b < 0 || l.pad_l < 0 || l.pad_r < 0) return layerWhere(net, i) + ": negative padding has no TFLite form";
            continue;
        case LayerKind::Add:
        case LayerKind::ChannelScale:
        case LayerKind::GlobalAvgPool:
            if (l.act == Activation::GELU) return layerWhere(net, i) + ": GELU has no int8 form in TFLite's builtin ops that TFLM implements";
            continue;
        default:
            return layerWhere(net, i) + ": no int8 TFLite op for it here (the int8 model has no " + layerKindName(l.kind) +
                   " op: CONV_2D, DEPTHWISE_CONV_2D, ADD, MUL, AVERAGE_POOL_2D, FULLY_CONNECTED only)";
        }
    }
    if (net.layers.empty()) return "the network has no layers";
    return "";
}

TfliteModel buildTflite(const Network& net, const QuantizedParams& p, const TfliteMetadata& meta)
{
    const std::string src = p.source.empty() ? std::string("params") : p.source;
    {
        const std::string obstacle = tfliteObstacle(net);
        if (!obstacle.empty()) throw InputError(net.name + ": cannot be written as TFLite: " + obstacle);
        const std::vector<std::string> bad = paramsMismatches(lowerForward(net), p);
        for (const std::string& m : bad)
            if (m.rfind("input", 0) != 0 && m.rfind("label", 0) != 0) throw InputError(src + ": " + m);
    }
    const int L = static_cast<int>(net.layers.size());

    // ---- Tensor quantization classes: slot 0 = the network input, 1 + i = layer i's output.
    std::vector<int> cls(static_cast<std::size_t>(L + 1));
    std::iota(cls.begin(), cls.end(), 0);
    auto slot = [](int layer) { return layer + 1; };
    std::function<int(int)> find = [&](int s) { return cls[static_cast<std::size_t>(s)] == s ? s : cls[static_cast<std::size_t>(s)] = find(cls[static_cast<std::size_t>(s)]); };
    for (int i = 0; i < L; ++i)
        if (net.layer(i).kind == LayerKind::GlobalAvgPool) cls[static_cast<std::size_t>(find(slot(i)))] = find(slot(net.layer(i).inputs[0]));
    std::vector<QuantClass> q(static_cast<std::size_t>(L + 1));
    auto qc = [&](int layer) -> QuantClass& { return q[static_cast<std::size_t>(find(slot(layer)))]; };
    auto hardZero = [&](int layer, int z, const std::string& who) {
        QuantClass& c = qc(layer);
        if (c.zeroSet && c.zero != z)
            throw InputError(src + ": " + who + " needs zero point " + std::to_string(z) + " for the tensor that " + c.zeroWho + " gives zero point " +
                             std::to_string(c.zero) + "; a TFLite tensor has one quantization");
        if (!c.zeroSet) c.zeroSet = true, c.zero = z, c.zeroWho = who;
    };
    auto hardScale = [&](int layer, double s, const std::string& who) {
        QuantClass& c = qc(layer);
        if (c.hardScale && !sameScale(c.scale, s)) {
            std::ostringstream m;
            m << src << ": " << who << " reads its input with scale " << s << ", " << c.scaleWho << " with " << c.scale
              << "; a TFLite tensor has one quantization";
            throw InputError(m.str());
        }
        if (!c.hardScale) c.hardScale = true, c.scale = s, c.scaleWho = who;
    };
    auto scaleKey = [&](const std::string& key) { return p.hasScale(key) ? p.scales.at(key) : 0.0; };
    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        const std::string who = layerWhere(net, i);
        const std::string& pre = l.ir_prefix;
        switch (l.kind) {
        case LayerKind::Conv: {
            hardZero(l.inputs[0], static_cast<int>(p.value(pre + "_zero_x")), who + " (CONV input)");
            hardZero(i, static_cast<int>(p.value(pre + "_zero_y")), who + " (CONV output)");
            if (const double sx = scaleKey(pre + "_x_scale"); sx > 0 && qc(l.inputs[0]).softConsumer == 0) qc(l.inputs[0]).softConsumer = sx;
            if (const double sy = scaleKey(pre + "_y_scale"); sy > 0) qc(i).softProducer = sy;
            break;
        }
        case LayerKind::Add:
        case LayerKind::ChannelScale: {
            const std::string op = l.kind == LayerKind::Add ? " (ADD " : " (MUL ";
            hardZero(l.inputs[0], static_cast<int>(p.value(pre + "_zero_x1")), who + op + "input 1)");
            hardZero(l.inputs[1], static_cast<int>(p.value(pre + "_zero_x2")), who + op + "input 2)");
            hardZero(i, static_cast<int>(p.value(pre + "_zero_y")), who + op + "output)");
            hardScale(l.inputs[0], p.value(pre + "_scale_x1"), who + op + "input 1)");
            hardScale(l.inputs[1], p.value(pre + "_scale_x2"), who + op + "input 2)");
            hardScale(i, p.value(pre + "_scale_y"), who + op + "output)");
            break;
        }
        default:
            break;
        }
    }
    // Resolve every class: a hard scale, else the producing conv's y scale (or the stem's x
    // scale for the input), else a consuming conv's x scale.
    auto resolved = [&](int layer) -> const QuantClass& {
        QuantClass& c = qc(layer);
        if (!c.hardScale) {
            c.scale = c.softProducer > 0 ? c.softProducer : c.softConsumer;
            if (!(c.scale > 0)) {
                const std::string what = layer < 0 ? std::string("the network input") : "the output of " + layerWhere(net, layer);
                throw InputError(src + ": no scale for " + what + " (scale.json lacks the conv's _x_scale / _y_scale)");
            }
            c.hardScale = true;
            c.scaleWho = "scale.json";
        }
        if (!c.zeroSet) {
            const std::string what = layer < 0 ? std::string("the network input") : "the output of " + layerWhere(net, layer);
            throw InputError(src + ": no zero point for " + what);
        }
        return c;
    };
    {   // the input's soft scale is the stem's x scale (softConsumer), never a producer's
        QuantClass& in = qc(-1);
        if (in.softProducer == 0) in.softProducer = in.softConsumer;
    }

    // ---- The flatbuffer.
    flatbuffers::FlatBufferBuilder fb(1 << 16);
    std::vector<flatbuffers::Offset<tflite::Buffer>> buffers;
    buffers.push_back(tflite::CreateBuffer(fb));   // buffer 0: the empty buffer of activations
    std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
    std::vector<flatbuffers::Offset<tflite::Operator>> operators;
    std::vector<tflite::BuiltinOperator> codes;
    TfliteModel out;
    std::int64_t weightBytes = 0;

    auto dataBuffer = [&](const void* data, std::size_t n) {
        fb.ForceVectorAlignment(n, 1, 16);
        buffers.push_back(tflite::CreateBuffer(fb, fb.CreateVector(static_cast<const std::uint8_t*>(data), n)));
        return static_cast<std::uint32_t>(buffers.size() - 1);
    };
    auto quant = [&](const std::vector<float>& scales, const std::vector<std::int64_t>& zeros, int dim) {
        return tflite::CreateQuantizationParametersDirect(fb, nullptr, nullptr, &scales, &zeros, dim);
    };
    auto tensor = [&](const std::vector<int>& shape, tflite::TensorType type, std::uint32_t buffer, const std::string& name,
                      flatbuffers::Offset<tflite::QuantizationParameters> qp) {
        tensors.push_back(tflite::CreateTensorDirect(fb, &shape, type, buffer, name.c_str(), qp));
        return static_cast<int>(tensors.size() - 1);
    };
    auto activation = [&](const std::vector<int>& shape, const std::string& name, const QuantClass& c) {
        return tensor(shape, tflite::TensorType_INT8, 0, name, quant({static_cast<float>(c.scale)}, {c.zero}, 0));
    };
    auto opcode = [&](tflite::BuiltinOperator op) {
        auto it = std::find(codes.begin(), codes.end(), op);
        if (it == codes.end()) codes.push_back(op), it = codes.end() - 1;
        ++out.ops[builtinName(op)];
        return static_cast<std::uint32_t>(it - codes.begin());
    };
    auto addOp = [&](tflite::BuiltinOperator op, const std::vector<int>& ins, const std::vector<int>& outs, tflite::BuiltinOptions type,
                     flatbuffers::Offset<void> options) {
        const std::uint32_t code = opcode(op);
        operators.push_back(tflite::CreateOperatorDirect(fb, code, &ins, &outs, type, options));
    };
    auto nhwc = [](const Shape3& s) { return std::vector<int>{1, s.h, s.w, s.c}; };

    std::vector<int> tensorOf(static_cast<std::size_t>(L + 1), -1);
    {
        const QuantClass& c = resolved(-1);
        tensorOf[0] = activation(nhwc(net.input), "input", c);
        out.input = TfliteTensorInfo{nhwc(net.input), static_cast<double>(static_cast<float>(c.scale)), c.zero};
    }
    auto act = [&](int layer) { return tensorOf[static_cast<std::size_t>(slot(layer))]; };

    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        const std::string& pre = l.ir_prefix;
        const QuantClass& cy = resolved(i);
        switch (l.kind) {
        case LayerKind::Conv: {
            const QuantClass& cx = resolved(l.inputs[0]);
            const bool fc = isTfliteClassifier(net, i), dw = l.depthwise();
            const std::vector<float> seff = p.floats(pre + "_scale");
            const std::vector<std::int32_t> w = intsOf(p.array(pre + "_weight"));   // OIHW
            const std::vector<std::int32_t> bias = intsOf(p.array(pre + "_bias"));
            const int O = l.cout, I = l.cin / l.groups;
            std::vector<float> sw(static_cast<std::size_t>(O)), sb(static_cast<std::size_t>(O));
            for (int o = 0; o < O; ++o) {
                sw[static_cast<std::size_t>(o)] = static_cast<float>(static_cast<double>(seff[static_cast<std::size_t>(o)]) * cy.scale / cx.scale);
                sb[static_cast<std::size_t>(o)] = static_cast<float>(static_cast<double>(static_cast<float>(cx.scale)) * sw[static_cast<std::size_t>(o)]);
            }
            {
                std::vector<double>& eff = out.effective_scales[pre + "_scale"];
                for (int o = 0; o < O; ++o)
                    eff.push_back(tfliteEffectiveScale(static_cast<float>(cx.scale), sw[static_cast<std::size_t>(o)], static_cast<float>(cy.scale)));
            }
            // Weights: CONV_2D [O, KH, KW, I]; DEPTHWISE_CONV_2D [1, KH, KW, C]; FULLY_CONNECTED [O, I].
            std::vector<std::int8_t> wt(w.size());
            std::vector<int> wshape;
            for (int o = 0; o < O; ++o)
                for (int c = 0; c < I; ++c)
                    for (int y = 0; y < l.kh; ++y)
                        for (int x = 0; x < l.kw; ++x) {
                            const std::int32_t v = w[((static_cast<std::size_t>(o) * I + c) * l.kh + y) * l.kw + x];
                            const std::size_t at = dw ? (static_cast<std::size_t>(y) * l.kw + x) * O + o
                                                      : ((static_cast<std::size_t>(o) * l.kh + y) * l.kw + x) * I + c;
                            wt[at] = static_cast<std::int8_t>(v);
                        }
            if (fc) wshape = {O, I};
            else if (dw) wshape = {1, l.kh, l.kw, O};
            else wshape = {O, l.kh, l.kw, I};
            const std::vector<std::int64_t> zeros(static_cast<std::size_t>(O), 0);
            const int wt_t = tensor(wshape, tflite::TensorType_INT8, dataBuffer(wt.data(), wt.size()), l.name + "/weight", quant(sw, zeros, dw ? 3 : 0));
            const int b_t = tensor({O}, tflite::TensorType_INT32, dataBuffer(bias.data(), bias.size() * 4), l.name + "/bias", quant(sb, zeros, 0));
            weightBytes += static_cast<std::int64_t>(wt.size() + bias.size() * 4);
            const tflite::ActivationFunctionType fused = fusedActivation(l.act, static_cast<float>(cy.scale), cy.zero);
            int x_t = act(l.inputs[0]);
            if (fc) {
                const std::vector<int> flat{1, l.cin};
                const std::vector<std::int32_t> shapeData{1, l.cin};
                const int shape_t = tensor({2}, tflite::TensorType_INT32, dataBuffer(shapeData.data(), 8), l.name + "/flatten_shape", 0);
                const int r_t = activation(flat, l.name + "/flatten", cx);
                addOp(tflite::BuiltinOperator_RESHAPE, {x_t, shape_t}, {r_t}, tflite::BuiltinOptions_ReshapeOptions,
                      tflite::CreateReshapeOptionsDirect(fb, &flat).Union());
                const int y_t = activation({1, O}, l.name, cy);
                addOp(tflite::BuiltinOperator_FULLY_CONNECTED, {r_t, wt_t, b_t}, {y_t}, tflite::BuiltinOptions_FullyConnectedOptions,
                      tflite::CreateFullyConnectedOptions(fb, fused).Union());
                tensorOf[static_cast<std::size_t>(slot(i))] = y_t;
                break;
            }
            const Padding pad = paddingOf(l);
            if (pad.explicitPad) {
                // PAD fills with the tensor's zero point (real 0), which is what our conv pads with.
                const std::vector<std::int32_t> pads{0, 0, l.pad_t, l.pad_b, l.pad_l, l.pad_r, 0, 0};
                const int pads_t = tensor({4, 2}, tflite::TensorType_INT32, dataBuffer(pads.data(), pads.size() * 4), l.name + "/paddings", 0);
                const Shape3 padded{l.in.c, l.in.h + l.pad_t + l.pad_b, l.in.w + l.pad_l + l.pad_r};
                const int p_t = activation(nhwc(padded), l.name + "/pad", cx);
                addOp(tflite::BuiltinOperator_PAD, {x_t, pads_t}, {p_t}, tflite::BuiltinOptions_PadOptions, tflite::CreatePadOptions(fb).Union());
                x_t = p_t;
            }
            const int y_t = activation(nhwc(l.out), l.name, cy);
            if (dw)
                addOp(tflite::BuiltinOperator_DEPTHWISE_CONV_2D, {x_t, wt_t, b_t}, {y_t}, tflite::BuiltinOptions_DepthwiseConv2DOptions,
                      tflite::CreateDepthwiseConv2DOptions(fb, pad.padding, l.stride_w, l.stride_h, 1, fused).Union());
            else
                addOp(tflite::BuiltinOperator_CONV_2D, {x_t, wt_t, b_t}, {y_t}, tflite::BuiltinOptions_Conv2DOptions,
                      tflite::CreateConv2DOptions(fb, pad.padding, l.stride_w, l.stride_h, fused).Union());
            tensorOf[static_cast<std::size_t>(slot(i))] = y_t;
            break;
        }
        case LayerKind::Add: {
            const int y_t = activation(nhwc(l.out), l.name, cy);
            addOp(tflite::BuiltinOperator_ADD, {act(l.inputs[0]), act(l.inputs[1])}, {y_t}, tflite::BuiltinOptions_AddOptions,
                  tflite::CreateAddOptions(fb, fusedActivation(l.act, static_cast<float>(cy.scale), cy.zero)).Union());
            tensorOf[static_cast<std::size_t>(slot(i))] = y_t;
            break;
        }
        case LayerKind::ChannelScale: {   // inputs[0]: the C×1×1 gate, broadcast over inputs[1]
            const int y_t = activation(nhwc(l.out), l.name, cy);
            addOp(tflite::BuiltinOperator_MUL, {act(l.inputs[0]), act(l.inputs[1])}, {y_t}, tflite::BuiltinOptions_MulOptions,
                  tflite::CreateMulOptions(fb, fusedActivation(l.act, static_cast<float>(cy.scale), cy.zero)).Union());
            tensorOf[static_cast<std::size_t>(slot(i))] = y_t;
            break;
        }
        case LayerKind::GlobalAvgPool: {
            const Shape3 in = net.shapeOf(l.inputs[0]);
            const int y_t = activation(nhwc(l.out), l.name, cy);
            addOp(tflite::BuiltinOperator_AVERAGE_POOL_2D, {act(l.inputs[0])}, {y_t}, tflite::BuiltinOptions_Pool2DOptions,
                  tflite::CreatePool2DOptions(fb, tflite::Padding_VALID, 1, 1, in.w, in.h).Union());
            tensorOf[static_cast<std::size_t>(slot(i))] = y_t;
            break;
        }
        default:
            throw InputError(net.name + ": cannot be written as TFLite: " + layerWhere(net, i));
        }
    }
    {
        const QuantClass& c = resolved(L - 1);
        const Layer& last = net.layer(L - 1);
        out.output = TfliteTensorInfo{isTfliteClassifier(net, L - 1) ? std::vector<int>{1, last.cout} : nhwc(last.out),
                                      static_cast<double>(static_cast<float>(c.scale)), c.zero};
    }

    // ---- Metadata.
    Json m = Json::object();
    m["format"] = "tinyscope-tflite";
    m["model"] = net.name;
    m["input"] = {{"shape", out.input.shape},
                  {"layout", "NHWC"},
                  {"channel_order", meta.channel_order},
                  {"mean", {meta.norm.mean[0], meta.norm.mean[1], meta.norm.mean[2]}},
                  {"std", {meta.norm.std[0], meta.norm.std[1], meta.norm.std[2]}},
                  {"scale", out.input.scale},
                  {"zero_point", out.input.zero_point}};
    m["output"] = out.output.toJson();
    m["labels"] = meta.labels;
    m["config"] = meta.config;
    int peakAt = -1;
    m["macs"] = net.macs();
    m["params"] = net.params();
    m["peak_sram_bytes"] = net.peakActivationBytes(&peakAt);
    m["flash_bytes"] = weightBytes;   // int8 weights + int32 biases
    for (auto it = meta.extra.begin(); it != meta.extra.end(); ++it) m[it.key()] = it.value();
    out.metadata = m;
    const std::string metaText = m.dump();
    const std::uint32_t metaBuffer = dataBuffer(metaText.data(), metaText.size());

    std::vector<flatbuffers::Offset<tflite::OperatorCode>> opcodes;
    for (tflite::BuiltinOperator c : codes)
        opcodes.push_back(tflite::CreateOperatorCode(fb, static_cast<std::int8_t>(c), 0, opVersion(c), c));
    const std::vector<int> inputs{tensorOf[0]}, outputs{act(L - 1)};
    const auto subgraph = tflite::CreateSubGraphDirect(fb, &tensors, &inputs, &outputs, &operators, "main");
    const std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{subgraph};
    const std::vector<flatbuffers::Offset<tflite::Metadata>> metadata{tflite::CreateMetadataDirect(fb, "tinyscope", metaBuffer)};
    const std::string description = meta.description.empty() ? "Tinyscope int8 export of " + net.name : meta.description;
    const auto model = tflite::CreateModelDirect(fb, 3, &opcodes, &subgraphs, description.c_str(), &buffers, nullptr, &metadata);
    tflite::FinishModelBuffer(fb, model);
    out.bytes.assign(reinterpret_cast<const char*>(fb.GetBufferPointer()), fb.GetSize());
    {   // The builder's own check of what it wrote.
        flatbuffers::Verifier v(fb.GetBufferPointer(), fb.GetSize());
        if (!tflite::VerifyModelBuffer(v)) throw std::logic_error("TFLite writer: the flatbuffer does not verify");
    }
    return out;
}

TfliteModel writeTflite(const std::string& path, const Network& net, const QuantizedParams& params, const TfliteMetadata& meta)
{
    TfliteModel m = buildTflite(net, params, meta);
    writeFileAtomic(path, m.bytes);
    return m;
}

}  // namespace tinyscope
