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

// The activation tensors' quantization: classes of tensors that must share one (slot 0 the network
// input, 1 + i layer i's output; a pool's input and output), the hard constraints of the ops that
// read or write them (refused when two disagree), then each class resolved (resolved()).
class ActivationQuantization {
public:
    ActivationQuantization(const Network& net, const QuantizedParams& p, const std::string& src);
    // Layer `layer`'s output (-1: the network input): a hard scale, else the producing conv's y
    // scale (or the stem's x scale for the input), else a consuming conv's x scale.
    const QuantClass& resolved(int layer);

private:
    static int slot(int layer) { return layer + 1; }
    int find(int s) { return cls_[static_cast<std::size_t>(s)] == s ? s : cls_[static_cast<std::size_t>(s)] = find(cls_[static_cast<std::size_t>(s)]); }
    QuantClass& qc(int layer) { return q_[static_cast<std::size_t>(find(slot(layer)))]; }
    void hardZero(int layer, int z, const std::string& who);
    void hardScale(int layer, double s, const std::string& who);

    const Network& net_;
    std::string src_;
    std::vector<int> cls_;
    std::vector<QuantClass> q_;
};

ActivationQuantization::ActivationQuantization(const Network& net, const QuantizedParams& p, const std::string& src)
    : net_(net), src_(src), cls_(net.layers.size() + 1), q_(net.layers.size() + 1)
{
    const int L = static_cast<int>(net.layers.size());
    std::iota(cls_.begin(), cls_.end(), 0);
    for (int i = 0; i < L; ++i)
        if (net.layer(i).kind == LayerKind::GlobalAvgPool) cls_[static_cast<std::size_t>(find(slot(i)))] = find(slot(net.layer(i).inputs[0]));
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
    // The input's soft scale is the stem's x scale (softConsumer), never a producer's.
    QuantClass& in = qc(-1);
    if (in.softProducer == 0) in.softProducer = in.softConsumer;
}

void ActivationQuantization::hardZero(int layer, int z, const std::string& who)
{
    QuantClass& c = qc(layer);
    if (c.zeroSet && c.zero != z)
        throw InputError(src_ + ": " + who + " needs zero point " + std::to_string(z) + " for the tensor that " + c.zeroWho + " gives zero point " +
                         std::to_string(c.zero) + "; a TFLite tensor has one quantization");
    if (!c.zeroSet) c.zeroSet = true, c.zero = z, c.zeroWho = who;
}

void ActivationQuantization::hardScale(int layer, double s, const std::string& who)
{
    QuantClass& c = qc(layer);
    if (c.hardScale && !sameScale(c.scale, s)) {
        std::ostringstream m;
        m << src_ << ": " << who << " reads its input with scale " << s << ", " << c.scaleWho << " with " << c.scale
          << "; a TFLite tensor has one quantization";
        throw InputError(m.str());
    }
    if (!c.hardScale) c.hardScale = true, c.scale = s, c.scaleWho = who;
}

const QuantClass& ActivationQuantization::resolved(int layer)
{
    QuantClass& c = qc(layer);
    if (!c.hardScale) {
        c.scale = c.softProducer > 0 ? c.softProducer : c.softConsumer;
        if (!(c.scale > 0)) {
            const std::string what = layer < 0 ? std::string("the network input") : "the output of " + layerWhere(net_, layer);
            throw InputError(src_ + ": no scale for " + what + " (scale.json lacks the conv's _x_scale / _y_scale)");
        }
        c.hardScale = true;
        c.scaleWho = "scale.json";
    }
    if (!c.zeroSet) {
        const std::string what = layer < 0 ? std::string("the network input") : "the output of " + layerWhere(net_, layer);
        throw InputError(src_ + ": no zero point for " + what);
    }
    return c;
}

// The flatbuffer as it is written: buffers, tensors, operators and operator codes in the order
// they are made (buffer 0: the empty buffer of activations), the ops counted into `out`.
class TfliteWriter {
public:
    TfliteWriter() { buffers_.push_back(tflite::CreateBuffer(fb)); }

    std::uint32_t dataBuffer(const void* data, std::size_t n)
    {
        fb.ForceVectorAlignment(n, 1, 16);
        buffers_.push_back(tflite::CreateBuffer(fb, fb.CreateVector(static_cast<const std::uint8_t*>(data), n)));
        return static_cast<std::uint32_t>(buffers_.size() - 1);
    }
    flatbuffers::Offset<tflite::QuantizationParameters> quant(const std::vector<float>& scales, const std::vector<std::int64_t>& zeros, int dim)
    {
        return tflite::CreateQuantizationParametersDirect(fb, nullptr, nullptr, &scales, &zeros, dim);
    }
    int tensor(const std::vector<int>& shape, tflite::TensorType type, std::uint32_t buffer, const std::string& name,
               flatbuffers::Offset<tflite::QuantizationParameters> qp)
    {
        tensors_.push_back(tflite::CreateTensorDirect(fb, &shape, type, buffer, name.c_str(), qp));
        return static_cast<int>(tensors_.size() - 1);
    }
    int activation(const std::vector<int>& shape, const std::string& name, const QuantClass& c)
    {
        return tensor(shape, tflite::TensorType_INT8, 0, name, quant({static_cast<float>(c.scale)}, {c.zero}, 0));
    }
    void addOp(tflite::BuiltinOperator op, const std::vector<int>& ins, const std::vector<int>& outs, tflite::BuiltinOptions type,
               flatbuffers::Offset<void> options)
    {
        const std::uint32_t code = opcode(op);
        operators_.push_back(tflite::CreateOperatorDirect(fb, code, &ins, &outs, type, options));
    }
    // The model with `inputs`, `outputs`, the description and the metadata buffer; verified.
    std::string finish(const std::vector<int>& inputs, const std::vector<int>& outputs, const std::string& description, std::uint32_t metaBuffer);

    flatbuffers::FlatBufferBuilder fb{1 << 16};
    TfliteModel out;
    std::int64_t weightBytes = 0;   // int8 weights + int32 biases

private:
    std::uint32_t opcode(tflite::BuiltinOperator op)
    {
        auto it = std::find(codes_.begin(), codes_.end(), op);
        if (it == codes_.end()) codes_.push_back(op), it = codes_.end() - 1;
        ++out.ops[builtinName(op)];
        return static_cast<std::uint32_t>(it - codes_.begin());
    }

    std::vector<flatbuffers::Offset<tflite::Buffer>> buffers_;
    std::vector<flatbuffers::Offset<tflite::Tensor>> tensors_;
    std::vector<flatbuffers::Offset<tflite::Operator>> operators_;
    std::vector<tflite::BuiltinOperator> codes_;
};

std::string TfliteWriter::finish(const std::vector<int>& inputs, const std::vector<int>& outputs, const std::string& description, std::uint32_t metaBuffer)
{
    std::vector<flatbuffers::Offset<tflite::OperatorCode>> opcodes;
    for (tflite::BuiltinOperator c : codes_)
        opcodes.push_back(tflite::CreateOperatorCode(fb, static_cast<std::int8_t>(c), 0, opVersion(c), c));
    const auto subgraph = tflite::CreateSubGraphDirect(fb, &tensors_, &inputs, &outputs, &operators_, "main");
    const std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{subgraph};
    const std::vector<flatbuffers::Offset<tflite::Metadata>> metadata{tflite::CreateMetadataDirect(fb, "tinyscope", metaBuffer)};
    const auto model = tflite::CreateModelDirect(fb, 3, &opcodes, &subgraphs, description.c_str(), &buffers_, nullptr, &metadata);
    tflite::FinishModelBuffer(fb, model);
    {   // The builder's own check of what it wrote.
        flatbuffers::Verifier v(fb.GetBufferPointer(), fb.GetSize());
        if (!tflite::VerifyModelBuffer(v)) throw std::logic_error("TFLite writer: the flatbuffer does not verify");
    }
    return std::string(reinterpret_cast<const char*>(fb.GetBufferPointer()), fb.GetSize());
}

std::vector<int> nhwc(const Shape3& s) { return std::vector<int>{1, s.h, s.w, s.c}; }

// Conv layer `i` (CONV_2D, DEPTHWISE_CONV_2D, or RESHAPE + FULLY_CONNECTED for the classifier; a
// PAD first where SAME is not the layer's padding) reading tensor `x_t`; returns its output tensor.
int writeConv(TfliteWriter& w, const Network& net, int i, const QuantizedParams& p, const QuantClass& cx, const QuantClass& cy, int x_t)
{
    flatbuffers::FlatBufferBuilder& fb = w.fb;
    const Layer& l = net.layer(i);
    const std::string& pre = l.ir_prefix;
    const bool fc = isTfliteClassifier(net, i), dw = l.depthwise();
    const std::vector<float> seff = p.floats(pre + "_scale");
    const std::vector<std::int32_t> wts = intsOf(p.array(pre + "_weight"));   // OIHW
    const std::vector<std::int32_t> bias = intsOf(p.array(pre + "_bias"));
    const int O = l.cout, I = l.cin / l.groups;
    std::vector<float> sw(static_cast<std::size_t>(O)), sb(static_cast<std::size_t>(O));
    for (int o = 0; o < O; ++o) {
        sw[static_cast<std::size_t>(o)] = static_cast<float>(static_cast<double>(seff[static_cast<std::size_t>(o)]) * cy.scale / cx.scale);
        sb[static_cast<std::size_t>(o)] = static_cast<float>(static_cast<double>(static_cast<float>(cx.scale)) * sw[static_cast<std::size_t>(o)]);
    }
    {
        std::vector<double>& eff = w.out.effective_scales[pre + "_scale"];
        for (int o = 0; o < O; ++o)
            eff.push_back(tfliteEffectiveScale(static_cast<float>(cx.scale), sw[static_cast<std::size_t>(o)], static_cast<float>(cy.scale)));
    }
    // Weights: CONV_2D [O, KH, KW, I]; DEPTHWISE_CONV_2D [1, KH, KW, C]; FULLY_CONNECTED [O, I].
    std::vector<std::int8_t> wt(wts.size());
    std::vector<int> wshape;
    for (int o = 0; o < O; ++o)
        for (int c = 0; c < I; ++c)
            for (int y = 0; y < l.kh; ++y)
                for (int x = 0; x < l.kw; ++x) {
                    const std::int32_t v = wts[((static_cast<std::size_t>(o) * I + c) * l.kh + y) * l.kw + x];
                    const std::size_t at = dw ? (static_cast<std::size_t>(y) * l.kw + x) * O + o
                                              : ((static_cast<std::size_t>(o) * l.kh + y) * l.kw + x) * I + c;
                    wt[at] = static_cast<std::int8_t>(v);
                }
    if (fc) wshape = {O, I};
    else if (dw) wshape = {1, l.kh, l.kw, O};
    else wshape = {O, l.kh, l.kw, I};
    const std::vector<std::int64_t> zeros(static_cast<std::size_t>(O), 0);
    const int wt_t = w.tensor(wshape, tflite::TensorType_INT8, w.dataBuffer(wt.data(), wt.size()), l.name + "/weight", w.quant(sw, zeros, dw ? 3 : 0));
    const int b_t = w.tensor({O}, tflite::TensorType_INT32, w.dataBuffer(bias.data(), bias.size() * 4), l.name + "/bias", w.quant(sb, zeros, 0));
    w.weightBytes += static_cast<std::int64_t>(wt.size() + bias.size() * 4);
    const tflite::ActivationFunctionType fused = fusedActivation(l.act, static_cast<float>(cy.scale), cy.zero);
    if (fc) {
        const std::vector<int> flat{1, l.cin};
        const std::vector<std::int32_t> shapeData{1, l.cin};
        const int shape_t = w.tensor({2}, tflite::TensorType_INT32, w.dataBuffer(shapeData.data(), 8), l.name + "/flatten_shape", 0);
        const int r_t = w.activation(flat, l.name + "/flatten", cx);
        w.addOp(tflite::BuiltinOperator_RESHAPE, {x_t, shape_t}, {r_t}, tflite::BuiltinOptions_ReshapeOptions,
                tflite::CreateReshapeOptionsDirect(fb, &flat).Union());
        const int y_t = w.activation({1, O}, l.name, cy);
        w.addOp(tflite::BuiltinOperator_FULLY_CONNECTED, {r_t, wt_t, b_t}, {y_t}, tflite::BuiltinOptions_FullyConnectedOptions,
                tflite::CreateFullyConnectedOptions(fb, fused).Union());
        return y_t;
    }
    const Padding pad = paddingOf(l);
    if (pad.explicitPad) {
        // PAD fills with the tensor's zero point (real 0), which is what our conv pads with.
        const std::vector<std::int32_t> pads{0, 0, l.pad_t, l.pad_b, l.pad_l, l.pad_r, 0, 0};
        const int pads_t = w.tensor({4, 2}, tflite::TensorType_INT32, w.dataBuffer(pads.data(), pads.size() * 4), l.name + "/paddings", 0);
        const Shape3 padded{l.in.c, l.in.h + l.pad_t + l.pad_b, l.in.w + l.pad_l + l.pad_r};
        const int p_t = w.activation(nhwc(padded), l.name + "/pad", cx);
        w.addOp(tflite::BuiltinOperator_PAD, {x_t, pads_t}, {p_t}, tflite::BuiltinOptions_PadOptions, tflite::CreatePadOptions(fb).Union());
        x_t = p_t;
    }
    const int y_t = w.activation(nhwc(l.out), l.name, cy);
    if (dw)
        w.addOp(tflite::BuiltinOperator_DEPTHWISE_CONV_2D, {x_t, wt_t, b_t}, {y_t}, tflite::BuiltinOptions_DepthwiseConv2DOptions,
                tflite::CreateDepthwiseConv2DOptions(fb, pad.padding, l.stride_w, l.stride_h, 1, fused).Union());
    else
        w.addOp(tflite::BuiltinOperator_CONV_2D, {x_t, wt_t, b_t}, {y_t}, tflite::BuiltinOptions_Conv2DOptions,
                tflite::CreateConv2DOptions(fb, pad.padding, l.stride_w, l.stride_h, fused).Union());
    return y_t;
}

// The "tinyscope" metadata: the input's layout and normalisation, the output, labels, config and
// the network's figures (flash: the weights written).
Json metadataJson(const Network& net, const TfliteModel& out, const TfliteMetadata& meta, std::int64_t weightBytes)
{
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
    return m;
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
    ActivationQuantization quant(net, p, src);
    TfliteWriter w;
    flatbuffers::FlatBufferBuilder& fb = w.fb;
    TfliteModel& out = w.out;

    std::vector<int> tensorOf(static_cast<std::size_t>(L + 1), -1);   // slot 0 the input, 1 + i layer i's output
    {
        const QuantClass& c = quant.resolved(-1);
        tensorOf[0] = w.activation(nhwc(net.input), "input", c);
        out.input = TfliteTensorInfo{nhwc(net.input), static_cast<double>(static_cast<float>(c.scale)), c.zero};
    }
    auto act = [&](int layer) { return tensorOf[static_cast<std::size_t>(layer + 1)]; };
    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        const QuantClass& cy = quant.resolved(i);
        int y_t = -1;
        switch (l.kind) {
        case LayerKind::Conv:
            y_t = writeConv(w, net, i, p, quant.resolved(l.inputs[0]), cy, act(l.inputs[0]));
            break;
        case LayerKind::Add:
            y_t = w.activation(nhwc(l.out), l.name, cy);
            w.addOp(tflite::BuiltinOperator_ADD, {act(l.inputs[0]), act(l.inputs[1])}, {y_t}, tflite::BuiltinOptions_AddOptions,
                    tflite::CreateAddOptions(fb, fusedActivation(l.act, static_cast<float>(cy.scale), cy.zero)).Union());
            break;
        case LayerKind::ChannelScale:   // inputs[0]: the C×1×1 gate, broadcast over inputs[1]
            y_t = w.activation(nhwc(l.out), l.name, cy);
            w.addOp(tflite::BuiltinOperator_MUL, {act(l.inputs[0]), act(l.inputs[1])}, {y_t}, tflite::BuiltinOptions_MulOptions,
                    tflite::CreateMulOptions(fb, fusedActivation(l.act, static_cast<float>(cy.scale), cy.zero)).Union());
            break;
        case LayerKind::GlobalAvgPool: {
            const Shape3 in = net.shapeOf(l.inputs[0]);
            y_t = w.activation(nhwc(l.out), l.name, cy);
            w.addOp(tflite::BuiltinOperator_AVERAGE_POOL_2D, {act(l.inputs[0])}, {y_t}, tflite::BuiltinOptions_Pool2DOptions,
                    tflite::CreatePool2DOptions(fb, tflite::Padding_VALID, 1, 1, in.w, in.h).Union());
            break;
        }
        default:
            throw InputError(net.name + ": cannot be written as TFLite: " + layerWhere(net, i));
        }
        tensorOf[static_cast<std::size_t>(i + 1)] = y_t;
    }
    {
        const QuantClass& c = quant.resolved(L - 1);
        const Layer& last = net.layer(L - 1);
        out.output = TfliteTensorInfo{isTfliteClassifier(net, L - 1) ? std::vector<int>{1, last.cout} : nhwc(last.out),
                                      static_cast<double>(static_cast<float>(c.scale)), c.zero};
    }
    out.metadata = metadataJson(net, out, meta, w.weightBytes);
    const std::string metaText = out.metadata.dump();
    const std::uint32_t metaBuffer = w.dataBuffer(metaText.data(), metaText.size());
    const std::string description = meta.description.empty() ? "Tinyscope int8 export of " + net.name : meta.description;
    out.bytes = w.finish({tensorOf[0]}, {act(L - 1)}, description, metaBuffer);
    return out;
}

TfliteModel writeTflite(const std::string& path, const Network& net, const QuantizedParams& params, const TfliteMetadata& meta)
{
    TfliteModel m = buildTflite(net, params, meta);
    writeFileAtomic(path, m.bytes);
    return m;
}

}  // namespace tinyscope
