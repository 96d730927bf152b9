#include "deploy/OnnxExport.h"

#include "Error.h"
#include "Version.h"
#include "io/AtomicFile.h"

#include "onnx.pb.h"   // generated from Debian's onnx.proto (package tinyscope.onnx), core/CMakeLists.txt

#include <cstring>
#include <set>

namespace tinyscope {

namespace {

constexpr std::int64_t kOpset = 13;
constexpr std::int64_t kIrVersion = 7;   // the IR version of opset 13 (ONNX 1.8)

class GraphWriter {
public:
    explicit GraphWriter(onnx::GraphProto& g) : g_(g) {}

    onnx::NodeProto& node(const std::string& op, const std::string& name, std::initializer_list<std::string> inputs,
                          const std::string& output)
    {
        onnx::NodeProto& n = *g_.add_node();
        n.set_op_type(op);
        n.set_name(name);
        for (const std::string& in : inputs) n.add_input(in);
        n.add_output(output);
        ++ops[op];
        return n;
    }

    void floats(const std::string& name, const std::vector<float>& v, const std::vector<std::int64_t>& dims)
    {
        onnx::TensorProto& t = *g_.add_initializer();
        t.set_name(name);
        t.set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (std::int64_t d : dims) t.add_dims(d);
        std::string raw(v.size() * sizeof(float), '\0');   // raw_data is little-endian, as is the host
        if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());
        t.set_raw_data(std::move(raw));
    }

    // A scalar constant shared by every node that needs it (Clip's bounds).
    const std::string& scalar(float value)
    {
        auto it = scalars_.find(value);
        if (it != scalars_.end()) return it->second;
        const std::string name = "const_" + std::to_string(scalars_.size()) + "_" + std::to_string(value);
        floats(name, {value}, {});
        return scalars_.emplace(value, name).first->second;
    }

    std::map<std::string, int> ops;

private:
    onnx::GraphProto& g_;
    std::map<float, std::string> scalars_;
};

void intsAttr(onnx::NodeProto& n, const std::string& name, std::initializer_list<std::int64_t> values)
{
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto_AttributeType_INTS);
    for (std::int64_t v : values) a.add_ints(v);
}

void intAttr(onnx::NodeProto& n, const std::string& name, std::int64_t value)
{
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto_AttributeType_INT);
    a.set_i(value);
}

void floatAttr(onnx::NodeProto& n, const std::string& name, float value)
{
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a.set_f(value);
}

void valueInfo(onnx::ValueInfoProto& v, const std::string& name, const std::vector<std::int64_t>& shape)
{
    v.set_name(name);
    onnx::TypeProto_Tensor& t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (std::int64_t d : shape) t.mutable_shape()->add_dim()->set_dim_value(d);
}

std::string where(const Network& net, std::size_t i)
{
    const Layer& l = net.layers[i];
    return net.name + ": layer " + std::to_string(i) + " '" + l.name + "'";
}

// Every reason the network cannot be written, checked before anything is built.
void checkExpressible(const OnnxSource& s)
{
    const Network& net = s.network;
    if (net.layers.empty()) throw InputError(net.name + ": the network has no layers");
    if (net.input.c <= 0 || net.input.h <= 0 || net.input.w <= 0) throw InputError(net.name + ": the network input has no shape");
    if (s.weight.size() != net.layers.size() || s.bias.size() != net.layers.size())
        throw InputError(net.name + ": weights for " + std::to_string(s.weight.size()) + " layers, the network has " +
                         std::to_string(net.layers.size()));
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        switch (l.kind) {
        case LayerKind::Conv:
            if (l.act == Activation::GELU)
                throw InputError(where(net, i) + " (Conv + GELU): ONNX opset 13 has no GELU operator; nothing written");
            if (static_cast<std::int64_t>(s.weight[i].size()) != l.weightElems() || static_cast<int>(s.bias[i].size()) != l.cout)
                throw InputError(where(net, i) + " (Conv): " + std::to_string(s.weight[i].size()) + " weights and " +
                                 std::to_string(s.bias[i].size()) + " biases, the layer has " + std::to_string(l.weightElems()) + " and " +
                                 std::to_string(l.cout));
            break;
        case LayerKind::Add:
            if (l.act == Activation::GELU)
                throw InputError(where(net, i) + " (Add + GELU): ONNX opset 13 has no GELU operator; nothing written");
            break;
        case LayerKind::GlobalAvgPool:
        case LayerKind::ChannelScale: break;
        default:
            throw InputError(where(net, i) + " (" + layerKindName(l.kind) + "): the ONNX writer has no lowering for this op; nothing written");
        }
    }
}

}  // namespace

OnnxModel buildOnnxModel(const OnnxSource& s)
{
    checkExpressible(s);
    const Network& net = s.network;
    onnx::ModelProto model;
    model.set_ir_version(kIrVersion);
    model.set_producer_name("tinyscope");
    model.set_producer_version(tinyscopeVersion());
    model.set_model_version(1);
    model.set_doc_string(s.doc);
    onnx::OperatorSetIdProto& opset = *model.add_opset_import();
    opset.set_domain("");
    opset.set_version(kOpset);
    for (const auto& [k, v] : s.metadata) {
        onnx::StringStringEntryProto& e = *model.add_metadata_props();
        e.set_key(k);
        e.set_value(v);
    }
    onnx::GraphProto& g = *model.mutable_graph();
    g.set_name(net.name);
    GraphWriter w(g);

    OnnxModel out;
    out.input_name = "input";
    out.output_name = "logits";
    out.input_shape = {1, net.input.c, net.input.h, net.input.w};
    valueInfo(*g.add_input(), out.input_name, out.input_shape);

    // Tensor names: the layer's module path, made unique.
    std::vector<std::string> names(net.layers.size());
    std::set<std::string> used{out.input_name, out.output_name};
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        std::string n = net.layers[i].name.empty() ? "layer" + std::to_string(i) : net.layers[i].name;
        if (used.count(n)) n += "#" + std::to_string(i);
        used.insert(n);
        names[i] = n;
    }
    auto src = [&](int layer) -> const std::string& { return layer < 0 ? out.input_name : names[static_cast<std::size_t>(layer)]; };
    // The activation after a conv or add: `pre` -> names[i] (or `pre` is names[i] without one).
    auto activate = [&](std::size_t i, const std::string& pre) {
        const std::string& y = names[i];
        switch (net.layers[i].act) {
        case Activation::None: break;
        case Activation::ReLU: w.node("Relu", y + ".relu", {pre}, y); break;
        case Activation::ReLU6: w.node("Clip", y + ".relu6", {pre, w.scalar(0.0f), w.scalar(6.0f)}, y); break;
        case Activation::HSigmoid: {   // ReLU6(x + 3) / 6 = max(0, min(1, x/6 + 1/2))
            onnx::NodeProto& n = w.node("HardSigmoid", y + ".hsigmoid", {pre}, y);
            floatAttr(n, "alpha", 1.0f / 6.0f);
            floatAttr(n, "beta", 0.5f);
            break;
        }
        case Activation::GELU: break;   // refused by checkExpressible
        }
    };
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        const std::string& y = names[i];
        const std::string pre = l.act == Activation::None ? y : y + ":pre";
        switch (l.kind) {
        case LayerKind::Conv: {
            w.floats(y + ".weight", s.weight[i], {l.cout, l.cin / l.groups, l.kh, l.kw});
            w.floats(y + ".bias", s.bias[i], {l.cout});
            onnx::NodeProto& n = w.node("Conv", y, {src(l.inputs[0]), y + ".weight", y + ".bias"}, pre);
            intsAttr(n, "kernel_shape", {l.kh, l.kw});
            intsAttr(n, "strides", {l.stride_h, l.stride_w});
            intsAttr(n, "pads", {l.pad_t, l.pad_l, l.pad_b, l.pad_r});
            intsAttr(n, "dilations", {1, 1});
            intAttr(n, "group", l.groups);
            activate(i, pre);
            break;
        }
        case LayerKind::Add:
            w.node("Add", y, {src(l.inputs[0]), src(l.inputs[1])}, pre);
            activate(i, pre);
            break;
        case LayerKind::GlobalAvgPool: w.node("GlobalAveragePool", y, {src(l.inputs[0])}, y); break;
        case LayerKind::ChannelScale:   // features [1, C, H, W] × gate [1, C, 1, 1] (broadcast)
            w.node("Mul", y, {src(l.inputs[1]), src(l.inputs[0])}, y);
            break;
        default: break;   // refused by checkExpressible
        }
    }
    const Shape3 last = net.layers.back().out;
    intAttr(w.node("Flatten", "flatten", {names.back()}, out.output_name), "axis", 1);
    out.output_shape = {1, last.elems()};
    valueInfo(*g.add_output(), out.output_name, out.output_shape);
    out.ops = w.ops;
    if (!model.SerializeToString(&out.bytes)) throw std::runtime_error(net.name + ": the ONNX model could not be serialized");
    return out;
}

void writeOnnxModel(const OnnxModel& model, const std::string& path) { writeFileAtomic(path, model.bytes); }

}  // namespace tinyscope
