#include "tinyengine/GraphJson.h"

#include "Error.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "graph/DeadCodeElimination.h"
#include "tinyengine/TinyEngineNames.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tinyscope {

namespace {

using OJson = nlohmann::ordered_json;

// Relay's attribute order per op type, as SerializeVisitor emits it (observed in the real file).
const std::vector<const char*>& attrOrder(OpKind k)
{
    static const std::vector<const char*> conv{"strides", "padding", "dilation", "groups", "channels", "kernel_size",
                                               "data_layout", "kernel_layout", "out_layout", "out_dtype"};
    static const std::vector<const char*> convT{"channels", "kernel_size", "strides", "output_padding", "padding", "dilation",
                                                "groups", "data_layout", "kernel_layout", "out_layout", "out_dtype"};
    static const std::vector<const char*> reduce{"axis", "keepdims", "exclude"};
    static const std::vector<const char*> fill{"shape", "dtype"};
    static const std::vector<const char*> slice{"begin", "end", "strides", "slice_mode", "axes"};
    static const std::vector<const char*> clamp{"min", "max"};
    static const std::vector<const char*> none;
    switch (k) {
    case OpKind::McuConv2d:
    case OpKind::Conv2d: return conv;
    case OpKind::Conv2dTranspose: return convT;
    case OpKind::McuMean:
    case OpKind::Sum:
    case OpKind::Mean: return reduce;
    case OpKind::Zeros:
    case OpKind::Ones: return fill;
    case OpKind::StridedSlice: return slice;
    case OpKind::McuTruncate: return clamp;
    default: return none;
    }
}

OJson orderedAttrs(OpKind k, const Json& attrs)
{
    OJson out = OJson::object();
    for (const char* key : attrOrder(k))
        if (attrs.contains(key)) out[key] = OJson::parse(attrs[key].dump());
    for (auto it = attrs.begin(); it != attrs.end(); ++it)
        if (!out.contains(it.key())) out[it.key()] = OJson::parse(it.value().dump());
    return out;
}

OJson shapeJson(const TensorShape& s) { return s.empty() ? OJson::array({1}) : OJson(s); }

const char* varType(TensorKind k)
{
    switch (k) {
    case TensorKind::Activation: return "activation";
    case TensorKind::Parameter: return "parameter";
    case TensorKind::Constant: return "constant";
    }
    return "activation";
}

}  // namespace

std::string graphJsonText(const TrainingGraph& g, ChildrenCount childrenCount)
{
    std::vector<int> position(g.ops.size(), -1);
    for (std::size_t i = 0; i < g.order.size(); ++i) position[static_cast<std::size_t>(g.order[i])] = static_cast<int>(i);
    auto opName = [&](int op) { return std::string(opTypeName(g.op(op).kind)) + "@" + std::to_string(position[static_cast<std::size_t>(op)]); };
    const std::vector<int> children = liveConsumerCounts(g);
    std::unordered_map<int, std::string> info;
    for (const GraphOutput& o : g.outputs) info.emplace(o.tensor, o.info);

    OJson ops = OJson::array();
    for (int opIndex : g.order) {
        const Op& op = g.op(opIndex);
        const std::string name = opName(opIndex);
        OJson inputs = OJson::array();
        for (int t : op.inputs) {
            const Tensor& tt = g.tensor(t);
            OJson d = OJson::object();
            if (tt.kind == TensorKind::Activation) {
                if (tt.producer < 0 || position[static_cast<std::size_t>(tt.producer)] < 0)
                    throw std::logic_error("graphJsonText: " + name + " reads a tensor no live op produces");
                d["name"] = "out_" + opName(tt.producer);
            } else if (tt.kind == TensorKind::Parameter) {
                d["name"] = tt.name;
            } else {
                d["name"] = name + "-constant";
            }
            d["var_type"] = varType(tt.kind);
            d["shape"] = shapeJson(tt.shape);
            d["dtype"] = dtypeName(tt.dtype);
            if (tt.kind == TensorKind::Constant) d["meta"] = OJson{{"data", tt.value}};
            else d["meta"] = nullptr;
            inputs.push_back(std::move(d));
        }
        const Tensor& out = g.tensor(op.output);
        OJson meta = OJson::object();
        const int k = children[static_cast<std::size_t>(op.output)];
        meta["children"] = childrenCount == ChildrenCount::Compiler ? std::min(k, 1) : k;
        auto it = info.find(op.output);
        if (it != info.end()) meta["output_info"] = it->second;
        OJson o = OJson::object();
        o["name"] = "out_" + name;
        o["var_type"] = "activation";
        o["shape"] = shapeJson(out.shape);
        o["dtype"] = dtypeName(out.dtype);
        o["meta"] = std::move(meta);
        OJson j = OJson::object();
        j["name"] = name;
        j["type"] = opTypeName(op.kind);
        j["attrs"] = orderedAttrs(op.kind, op.attrs);
        j["inputs"] = std::move(inputs);
        j["outputs"] = OJson::array({std::move(o)});
        ops.push_back(std::move(j));
    }
    return ops.dump(2);
}

namespace {

bool isForwardKind(OpKind k)
{
    return k == OpKind::McuConv2d || k == OpKind::McuTruncate || k == OpKind::McuAdd || k == OpKind::McuMean ||
           k == OpKind::McuMultiply;
}

// Inputs each op of TinyEngine's vocabulary reads (its compiler's layout, §5).
std::size_t inputCount(OpKind k)
{
    switch (k) {
    case OpKind::McuConv2d: return 6;
    case OpKind::McuAdd: case OpKind::McuMultiply: return 8;
    case OpKind::Zeros: case OpKind::Ones: return 0;
    case OpKind::Where: return 3;
    case OpKind::CrossEntropyWithLogits: case OpKind::GreaterEqual: case OpKind::LessEqual: case OpKind::Multiply:
    case OpKind::Subtract: case OpKind::Divide: case OpKind::Add: case OpKind::Conv2d: case OpKind::Conv2dTranspose:
        return 2;
    default: return 1;
    }
}

constexpr std::size_t kMaxRank = 8;
constexpr std::int64_t kMaxElements = std::int64_t(1) << 31;

class GraphOpsReader {
public:
    GraphOpsReader(const Json& ops, const std::string& source) : ops_(ops), src_(pathForMessage(source)) {}

    TrainingGraph run()
    {
        if (!ops_.is_array()) throw InputError(src_ + ": expected a JSON array of ops (TinyEngine's graph layout), got " + typeName(ops_));
        if (ops_.empty()) throw InputError(src_ + ": the graph has no ops");
        if (ops_.size() > kMaxGraphOps)
            throw InputError(src_ + ": " + groupThousands(static_cast<std::int64_t>(ops_.size())) + " ops, more than the " +
                             groupThousands(static_cast<std::int64_t>(kMaxGraphOps)) + " a training graph may have");
        for (std::size_t i = 0; i < ops_.size(); ++i) readOp(i);
        finish();
        return std::move(g_);
    }

private:
    const Json& ops_;
    std::string src_;   // the file, as messages show it (escaped)
    TrainingGraph g_;
    std::unordered_map<std::string, int> produced_;     // activation name -> tensor
    std::unordered_map<std::string, int> parameters_;   // parameter name -> tensor
    std::vector<int> declaredChildren_;                 // per tensor (outputs), -1 otherwise
    std::vector<std::string> opNames_;

    static std::string typeName(const Json& j) { return j.type_name(); }

    [[noreturn]] void fail(std::size_t op, const std::string& field, const std::string& reason) const
    {
        std::string where = src_ + ": op " + std::to_string(op);
        if (op < opNames_.size() && !opNames_[op].empty()) where += " (" + escapedForMessage(opNames_[op], 60) + ")";
        throw InputError(where + ": " + field + ": " + reason);
    }

    const Json& member(std::size_t op, const Json& obj, const char* key, const std::string& path) const
    {
        if (!obj.is_object()) fail(op, path.empty() ? "op" : path, "expected an object, got " + typeName(obj));
        auto it = obj.find(key);
        if (it == obj.end()) fail(op, path.empty() ? key : path + "." + key, "missing");
        return *it;
    }

    TensorShape readShape(std::size_t op, const Json& j, const std::string& field) const
    {
        if (!j.is_array()) fail(op, field, "expected a list of ints, got " + jsonBrief(j));
        if (j.size() > kMaxRank) fail(op, field, "more than " + std::to_string(kMaxRank) + " dimensions (" + std::to_string(j.size()) + ")");
        TensorShape s;
        std::int64_t elements = 1;
        for (const Json& e : j) {
            if (!e.is_number_integer() || e.get<long long>() < 0 || e.get<long long>() > (1 << 30))
                fail(op, field, "expected non-negative ints, got " + jsonBrief(e));
            s.push_back(e.get<int>());
            if (__builtin_mul_overflow(elements, static_cast<std::int64_t>(s.back()), &elements) || elements > kMaxElements)
                fail(op, field, "a tensor of more than " + std::to_string(kMaxElements) + " elements");
        }
        return s;
    }

    DType readDtype(std::size_t op, const Json& j, const std::string& field) const
    {
        DType d;
        if (!j.is_string() || !dtypeFromName(j.get<std::string>(), d))
            fail(op, field, "expected int8, int32, float32 or bool, got " + jsonBrief(j));
        return d;
    }

    std::string readString(std::size_t op, const Json& j, const std::string& field) const
    {
        if (!j.is_string() || j.get<std::string>().empty()) fail(op, field, "expected a non-empty string, got " + jsonBrief(j));
        return j.get<std::string>();
    }

    // A name that TinyEngine's code generator pastes into C (TinyEngineNames.h): parameters are C
    // identifiers, op and tensor names and output_info labels.
    std::string readName(std::size_t op, const Json& j, const std::string& field, bool identifier) const
    {
        std::string name = readString(op, j, field);
        const std::string refusal = tinyEngineNameRefusal(name, identifier);
        if (!refusal.empty()) fail(op, field, refusal);
        return name;
    }

    // The attributes later passes read without checking (conv geometry, axes, slices), validated
    // once here so that an imported graph cannot make them index out of range or divide by zero.
    std::vector<int> intList(std::size_t op, const Json& attrs, const char* key, std::size_t size, int lo, int hi) const
    {
        const std::string field = std::string("attrs.") + key;
        const Json& j = member(op, attrs, key, "attrs");
        if (!j.is_array() || (size && j.size() != size) || j.size() > kMaxRank)
            fail(op, field, (size ? "expected " + std::to_string(size) : std::string("expected up to ") + std::to_string(kMaxRank)) +
                                " integers, got " + jsonBrief(j));
        std::vector<int> out;
        for (const Json& e : j) {
            if (!e.is_number_integer() || e.get<long long>() < lo || e.get<long long>() > hi)
                fail(op, field, "expected integers in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + jsonBrief(e));
            out.push_back(e.get<int>());
        }
        return out;
    }
    void intAttr(std::size_t op, const Json& attrs, const char* key, int lo, int hi) const
    {
        const Json& j = member(op, attrs, key, "attrs");
        if (!j.is_number_integer() || j.get<long long>() < lo || j.get<long long>() > hi)
            fail(op, std::string("attrs.") + key, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + jsonBrief(j));
    }
    void axisAttr(std::size_t op, const Json& attrs, const char* key) const
    {
        const Json& j = member(op, attrs, key, "attrs");
        if (j.is_null()) return;
        if (j.is_array()) intList(op, attrs, key, 0, -static_cast<int>(kMaxRank), static_cast<int>(kMaxRank) - 1);
        else intAttr(op, attrs, key, -static_cast<int>(kMaxRank), static_cast<int>(kMaxRank) - 1);
    }

    // String attributes (layouts, dtypes, slice modes: "NCHW", "int8", "end", "") reach the code
    // generator too: each is empty or a C identifier.
    void checkAttrStrings(std::size_t i, const Json& v, const std::string& field) const
    {
        if (v.is_string()) {
            const std::string& s = v.get_ref<const std::string&>();
            if (!s.empty()) {
                const std::string refusal = tinyEngineNameRefusal(s, true);
                if (!refusal.empty()) fail(i, field, refusal);
            }
        } else if (v.is_array()) {
            for (std::size_t k = 0; k < v.size(); ++k) checkAttrStrings(i, v[k], field + "[" + std::to_string(k) + "]");
        } else if (v.is_object()) {
            for (auto it = v.begin(); it != v.end(); ++it) {
                const std::string refusal = tinyEngineNameRefusal(it.key(), true);
                if (!refusal.empty()) fail(i, field, "key " + refusal);
                checkAttrStrings(i, it.value(), field + "." + it.key());
            }
        }
    }

    void checkAttrs(std::size_t i, const Op& op) const
    {
        const Json& a = op.attrs;
        checkAttrStrings(i, a, "attrs");
        constexpr int kMaxGeometry = 1 << 12;
        switch (op.kind) {
        case OpKind::McuConv2d: case OpKind::Conv2d: case OpKind::Conv2dTranspose:
            intList(i, a, "strides", 2, 1, kMaxGeometry);
            intList(i, a, "padding", 4, 0, kMaxGeometry);
            // Only the weight-gradient conv (nn.conv2d, where the forward conv's stride becomes the
            // dilation, §5.4) is dilated; the forward conv and the transposed conv are computed
            // undilated everywhere (Int8Forward, the network recovered for the ledger, the
            // interpreter's transposed conv, TinyEngine's kernels), so any other dilation is refused.
            for (int d : intList(i, a, "dilation", 2, 1, kMaxGeometry))
                if (d != 1 && op.kind != OpKind::Conv2d)
                    fail(i, "attrs.dilation", "dilation " + std::to_string(d) + " is not supported on '" + opTypeName(op.kind) +
                                                  "': TinyEngine's kernels and the workbench compute it undilated (expected [1, 1])");
            intAttr(i, a, "groups", 1, 1 << 20);
            if (op.kind == OpKind::Conv2dTranspose) intList(i, a, "output_padding", 2, 0, kMaxGeometry);
            break;
        case OpKind::McuMean: case OpKind::Sum: case OpKind::Mean: case OpKind::LogSoftmax:
            axisAttr(i, a, "axis");
            break;
        case OpKind::Tile:
            intList(i, a, "reps", 0, 1, 1 << 20);
            break;
        case OpKind::Transpose:
            intList(i, a, "axes", 0, 0, static_cast<int>(kMaxRank) - 1);
            break;
        case OpKind::StridedSlice:
            intList(i, a, "begin", 0, 0, 1 << 30);
            intList(i, a, "end", 0, 0, 1 << 30);
            intList(i, a, "strides", 0, 1, 1 << 30);
            axisAttr(i, a, "axes");
            break;
        case OpKind::McuTruncate:
            intAttr(i, a, "min", -128, 127);
            intAttr(i, a, "max", -128, 127);
            break;
        default:
            break;
        }
    }

    int readInput(std::size_t op, const Json& d, const std::string& field)
    {
        const std::string vt = readString(op, member(op, d, "var_type", field), field + ".var_type");
        const std::string name = readName(op, member(op, d, "name", field), field + ".name", vt == "parameter");
        const TensorShape shape = readShape(op, member(op, d, "shape", field), field + ".shape");
        const DType dtype = readDtype(op, member(op, d, "dtype", field), field + ".dtype");
        const Json& meta = member(op, d, "meta", field);
        if (vt == "activation") {
            auto it = produced_.find(name);
            if (it == produced_.end()) fail(op, field + ".name", "'" + name + "' is not produced by an earlier op");
            const Tensor& t = g_.tensor(it->second);
            if (t.shape != shape) fail(op, field + ".shape", formatList(shape) + " differs from its producer's " + formatList(t.shape));
            if (t.dtype != dtype) fail(op, field + ".dtype", std::string(dtypeName(dtype)) + " differs from its producer's " + dtypeName(t.dtype));
            return it->second;
        }
        if (vt == "parameter") {
            auto it = parameters_.find(name);
            if (it != parameters_.end()) {
                const Tensor& t = g_.tensor(it->second);
                if (t.shape != shape || t.dtype != dtype)
                    fail(op, field, "parameter '" + name + "' used as " + dtypeName(dtype) + " " + formatList(shape) + ", earlier as " +
                                        dtypeName(t.dtype) + " " + formatList(t.shape));
                return it->second;
            }
            if (produced_.count(name)) fail(op, field + ".name", "parameter '" + name + "' has the name of an op output");
            Tensor t;
            t.kind = TensorKind::Parameter;
            t.dtype = dtype;
            t.shape = shape;
            t.name = name;
            g_.tensors.push_back(t);
            const int id = static_cast<int>(g_.tensors.size()) - 1;
            parameters_[name] = id;
            declaredChildren_.push_back(-1);
            return id;
        }
        if (vt == "constant") {
            if (!meta.is_object() || !meta.contains("data")) fail(op, field + ".meta", "a constant needs {\"data\": number}");
            const Json& data = meta["data"];
            if (!data.is_number()) fail(op, field + ".meta.data", "only scalar constants are supported, got " + jsonBrief(data));
            if (shapeElems(shape) != 1) fail(op, field + ".shape", "a scalar constant is written as [1], got " + formatList(shape));
            Tensor t;
            t.kind = TensorKind::Constant;
            t.dtype = dtype;
            t.value = data.get<double>();
            g_.tensors.push_back(t);
            declaredChildren_.push_back(-1);
            return static_cast<int>(g_.tensors.size()) - 1;
        }
        fail(op, field + ".var_type", "expected activation, parameter or constant, got '" + escapedForMessage(vt, 60) + "'");
    }

    void readOp(std::size_t i)
    {
        const Json& j = ops_[i];
        opNames_.push_back(j.is_object() && j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "");
        if (!j.is_object()) fail(i, "op", "expected an object, got " + typeName(j));
        if (j.contains("name")) readName(i, j["name"], "name", false);
        const std::string type = readString(i, member(i, j, "type", ""), "type");
        Op op;
        if (!opKindFromName(type, op.kind))
            fail(i, "type", "'" + escapedForMessage(type, 60) + "' is not an op of TinyEngine's training graphs");
        const Json& attrs = member(i, j, "attrs", "");
        if (!attrs.is_object()) fail(i, "attrs", "expected an object, got " + typeName(attrs));
        op.attrs = attrs;
        const Json& inputs = member(i, j, "inputs", "");
        if (!inputs.is_array()) fail(i, "inputs", "expected a list, got " + typeName(inputs));
        for (std::size_t k = 0; k < inputs.size(); ++k) op.inputs.push_back(readInput(i, inputs[k], "inputs[" + std::to_string(k) + "]"));
        const Json& outputs = member(i, j, "outputs", "");
        if (!outputs.is_array() || outputs.size() != 1)
            fail(i, "outputs", "expected exactly one output descriptor, got " + (outputs.is_array() ? std::to_string(outputs.size()) : typeName(outputs)));
        const Json& o = outputs[0];
        const std::string name = readName(i, member(i, o, "name", "outputs[0]"), "outputs[0].name", false);
        if (produced_.count(name)) fail(i, "outputs[0].name", "'" + name + "' is already produced by an earlier op");
        if (parameters_.count(name)) fail(i, "outputs[0].name", "'" + name + "' is already a parameter name");
        const std::string vt = readString(i, member(i, o, "var_type", "outputs[0]"), "outputs[0].var_type");
        if (vt != "activation") fail(i, "outputs[0].var_type", "an op output is an activation, got '" + escapedForMessage(vt, 60) + "'");
        Tensor t;
        t.kind = TensorKind::Activation;
        t.shape = readShape(i, member(i, o, "shape", "outputs[0]"), "outputs[0].shape");
        t.dtype = readDtype(i, member(i, o, "dtype", "outputs[0]"), "outputs[0].dtype");
        t.producer = static_cast<int>(i);
        const Json& meta = member(i, o, "meta", "outputs[0]");
        if (!meta.is_object() || !meta.contains("children") || !meta["children"].is_number_integer() || meta["children"].get<int>() < 0)
            fail(i, "outputs[0].meta.children", "expected a count >= 0, got " + (meta.is_object() && meta.contains("children") ? jsonBrief(meta["children"]) : std::string("nothing")));
        if (meta["children"].get<long long>() > (1 << 20)) fail(i, "outputs[0].meta.children", "implausible count " + jsonBrief(meta["children"]));
        const int children = meta["children"].get<int>();
        g_.tensors.push_back(t);
        const int id = static_cast<int>(g_.tensors.size()) - 1;
        declaredChildren_.push_back(children);
        produced_[name] = id;
        op.output = id;
        if (meta.contains("output_info")) {
            if (!meta["output_info"].is_string()) fail(i, "outputs[0].meta.output_info", "expected a string, got " + jsonBrief(meta["output_info"]));
            if (children != 0) fail(i, "outputs[0].meta.output_info", "only graph outputs (children 0) carry output_info");
            GraphOutput out;
            out.tensor = id;
            out.info = readName(i, meta["output_info"], "outputs[0].meta.output_info", false);
            g_.outputs.push_back(out);
        } else if (children == 0) {
            fail(i, "outputs[0].meta", "a graph output (children 0) needs output_info");
        }
        const std::size_t arity = inputCount(op.kind);
        if (op.inputs.size() != arity)
            fail(i, "inputs", std::string("'") + opTypeName(op.kind) + "' takes " + std::to_string(arity) + " inputs, got " +
                                  std::to_string(op.inputs.size()));
        checkAttrs(i, op);
        g_.ops.push_back(std::move(op));
    }

    void finish()
    {
        TrainingGraph& g = g_;
        // The graph input is model[0].inputs[0] (§9.1); the label is the parameter named so.
        const Op& first = g.op(0);
        if (first.inputs.empty() || g.tensor(first.inputs[0]).kind != TensorKind::Parameter)
            fail(0, "inputs[0]", "the first op must read the network input (a parameter)");
        g.input = first.inputs[0];
        auto lab = parameters_.find("label");
        g.label = lab == parameters_.end() ? -1 : lab->second;

        // Children must equal the real number of consuming slots (TinyEngine's in-place decisions use them).
        std::vector<int> uses(g.tensors.size(), 0);
        for (const Op& op : g.ops)
            for (int t : op.inputs) ++uses[static_cast<std::size_t>(t)];
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            const int t = g.ops[i].output;
            const int declared = declaredChildren_[static_cast<std::size_t>(t)], n = uses[static_cast<std::size_t>(t)];
            if (declared != n && !(declared == 1 && n > 1))   // MIT's compiler writes 1 for any consumed tensor
                fail(i, "outputs[0].meta.children", std::to_string(declaredChildren_[static_cast<std::size_t>(t)]) + ", but " +
                                                         std::to_string(uses[static_cast<std::size_t>(t)]) + " input slots read it");
        }

        // Forward + loss: everything up to the op producing "fwd@output".
        int lossOp = -1;
        for (const GraphOutput& o : g.outputs)
            if (o.info == "fwd@output") lossOp = g.tensor(o.tensor).producer;
        if (lossOp < 0) throw InputError(src_ + ": no op output has output_info \"fwd@output\" (the loss)");
        g.loss = g.op(lossOp).output;
        g.forward_ops = lossOp + 1;
        for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
            Op& op = g.ops[static_cast<std::size_t>(i)];
            if (i < g.forward_ops) {
                op.phase = isForwardKind(op.kind) ? Phase::Forward : Phase::Loss;
                op.role = isForwardKind(op.kind) ? OpRole::Forward : OpRole::Loss;
            } else {
                op.phase = Phase::Backward;
                if (isForwardKind(op.kind)) fail(static_cast<std::size_t>(i), "type", std::string("forward op '") + opTypeName(op.kind) + "' after the loss");
            }
        }
        inferRoles();
        // Output kinds and the loss first, as the output tuple.
        std::stable_partition(g.outputs.begin(), g.outputs.end(), [](const GraphOutput& o) { return o.info == "fwd@output"; });
        for (GraphOutput& o : g.outputs) {
            const Op& p = g.op(g.tensor(o.tensor).producer);
            if (o.info == "fwd@output") o.kind = GradientKind::Loss;
            else if (p.kind == OpKind::Zeros) o.kind = GradientKind::Zero;
            else if (endsWith(o.info, "_weight")) o.kind = GradientKind::Weight;
            else o.kind = GradientKind::Bias;
        }
        g.live.assign(g.ops.size(), 1);
        g.order.resize(g.ops.size());
        for (std::size_t i = 0; i < g.ops.size(); ++i) g.order[i] = static_cast<int>(i);
        g.parameter_gradient.assign(g.tensors.size(), -1);
        for (const GraphOutput& o : g.outputs) {
            auto it = parameters_.find(o.info);
            if (it != parameters_.end()) g.parameter_gradient[static_cast<std::size_t>(it->second)] = o.tensor;
        }
        std::vector<char> seen(g.tensors.size(), 0);
        for (const Op& op : g.ops)
            for (int t : op.inputs)
                if (g.tensor(t).kind == TensorKind::Parameter && !seen[static_cast<std::size_t>(t)]) {
                    seen[static_cast<std::size_t>(t)] = 1;
                    g.parameter_order.push_back(t);
                }
        bool accumulates = false;
        for (const Op& op : g.ops) accumulates |= op.phase == Phase::Backward && op.kind == OpKind::Add;
        bool subtractsZero = false;
        for (const Op& op : g.ops)
            subtractsZero |= op.role == OpRole::WeightGrad && op.kind == OpKind::Subtract;
        g.mode = accumulates || subtractsZero ? AutodiffMode::Correct : AutodiffMode::Reference;
    }

    // Roles from the §5.4 idioms: masks (bool ops and the cast feeding a comparison), weight-gradient
    // chains (everything a weight leaf depends on that no other leaf needs), bias sums, input
    // gradients (the transposed conv and its weight cast), accumulating adds, dummy zero leaves.
    void inferRoles()
    {
        TrainingGraph& g = g_;
        std::vector<int> consumers(g.tensors.size(), 0);
        for (const Op& op : g.ops)
            for (int t : op.inputs) ++consumers[static_cast<std::size_t>(t)];
        for (std::size_t i = static_cast<std::size_t>(g.forward_ops); i < g.ops.size(); ++i) {
            Op& op = g.ops[i];
            const Tensor& out = g.tensor(op.output);
            op.role = OpRole::Gradient;
            if (out.dtype == DType::Bool) op.role = OpRole::Mask;
            else if (op.kind == OpKind::Conv2dTranspose) op.role = OpRole::InputGrad;
            else if (op.kind == OpKind::Add) op.role = OpRole::Accumulate;
        }
        for (std::size_t i = static_cast<std::size_t>(g.forward_ops); i < g.ops.size(); ++i) {
            Op& op = g.ops[i];
            if (op.kind != OpKind::GreaterEqual && op.kind != OpKind::LessEqual) continue;
            const int p = g.tensor(op.inputs[0]).producer;
            if (p >= g.forward_ops && g.op(p).kind == OpKind::Cast) g.ops[static_cast<std::size_t>(p)].role = OpRole::Mask;
        }
        for (std::size_t i = static_cast<std::size_t>(g.forward_ops); i < g.ops.size(); ++i) {
            Op& op = g.ops[i];
            if (op.kind != OpKind::Conv2dTranspose) continue;
            const int p = g.tensor(op.inputs[1]).producer;
            if (p >= g.forward_ops && g.op(p).kind == OpKind::Cast) g.ops[static_cast<std::size_t>(p)].role = OpRole::InputGrad;
        }
        for (const GraphOutput& o : g.outputs) {
            const int p = g.tensor(o.tensor).producer;
            Op& leaf = g.ops[static_cast<std::size_t>(p)];
            if (o.info == "fwd@output") continue;
            if (leaf.kind == OpKind::Zeros) {
                leaf.role = OpRole::ZeroGrad;
            } else if (leaf.kind == OpKind::Sum) {
                leaf.role = OpRole::BiasGrad;
            } else if (endsWith(o.info, "_weight")) {
                // Walk back through ops used only by this chain (the gradient input of the tile stops it).
                std::vector<int> stack{p};
                while (!stack.empty()) {
                    const int k = stack.back();
                    stack.pop_back();
                    Op& c = g.ops[static_cast<std::size_t>(k)];
                    c.role = OpRole::WeightGrad;
                    if (c.kind == OpKind::Tile) continue;
                    for (int t : c.inputs) {
                        const int q = g.tensor(t).producer;
                        if (q >= g.forward_ops && consumers[static_cast<std::size_t>(t)] == 1) stack.push_back(q);
                    }
                }
            }
        }
    }
};

}  // namespace

TrainingGraph readGraphJson(const Json& ops, const std::string& source) { return GraphOpsReader(ops, source).run(); }

}  // namespace tinyscope
