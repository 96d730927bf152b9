#include "tinyengine/ExportChecker.h"

#include "graph/DeadCodeElimination.h"
#include "graph/KernelCoverage.h"

#include <map>
#include <set>
#include <unordered_map>

namespace tinyscope {

std::string Finding::text() const
{
    return std::string(error() ? "error" : "warning") + " " + spec + " " + rule + ": " + where + ": " + message;
}

Json Finding::toJson() const
{
    return {{"severity", error() ? "error" : "warning"}, {"rule", rule}, {"spec", spec}, {"where", where}, {"message", message}};
}

int errorCount(const std::vector<Finding>& findings)
{
    int n = 0;
    for (const Finding& f : findings) n += f.error();
    return n;
}

namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

class Checker {
public:
    Checker(const TrainingGraph& g, const Network& net, const QuantizedParams* params)
        : g_(g), net_(net), params_(params), parameters_(g.parameterIndex())
    {
        consumers_ = liveConsumerCounts(g);
        for (int op : g.order) {
            for (int t : g.op(op).inputs) readers_[t].push_back(op);
        }
    }

    int parameter(const std::string& name) const
    {
        const auto it = parameters_.find(name);
        return it == parameters_.end() ? -1 : it->second;
    }

    std::vector<Finding> run()
    {
        batch();
        vocabulary();
        forwardConvs();
        gradients();
        idioms();
        elementwiseKernels();
        naming();
        paramsAndScales();
        return std::move(out_);
    }

private:
    const TrainingGraph& g_;
    const Network& net_;
    const QuantizedParams* params_;
    std::unordered_map<std::string, int> parameters_;   // name -> tensor id (findParameter in the loops was quadratic)
    std::vector<int> consumers_;
    std::map<int, std::vector<int>> readers_;   // tensor -> live ops reading it
    std::vector<Finding> out_;

    void add(FindingSeverity s, const char* rule, const char* spec, std::string where, std::string message)
    {
        out_.push_back({s, rule, spec, std::move(where), std::move(message)});
    }
    void error(const char* rule, const char* spec, std::string where, std::string message)
    {
        add(FindingSeverity::Error, rule, spec, std::move(where), std::move(message));
    }

    std::string convWhere(const Layer& l) const { return "conv " + std::to_string(l.conv_index) + " (" + l.ir_prefix + ")"; }
    std::string opWhere(int op) const { return "op " + std::to_string(position(op)) + " (" + opTypeName(g_.op(op).kind) + ")"; }
    int position(int op) const
    {
        for (std::size_t i = 0; i < g_.order.size(); ++i)
            if (g_.order[i] == op) return static_cast<int>(i);
        return op;
    }
    bool isClassifier(const Layer& l) const { return l.conv_index == net_.numConvs() - 1; }
    bool hasLiveOp(OpKind kind, int layer) const
    {
        for (int op : g_.order)
            if (g_.op(op).kind == kind && g_.op(op).layer == layer) return true;
        return false;
    }

    void batch()
    {
        const Tensor& x = g_.tensor(g_.input);
        if (x.shape.empty() || x.shape[0] != 1)
            error("batch-1", "§9.8", "input", "TinyEngine runs batch 1; the input is " + Json(x.shape).dump());
    }

    void vocabulary()
    {
        for (int op : g_.order) {
            const Op& o = g_.op(op);
            if (o.kind == OpKind::McuMultiply)
                error("unsupported-op", "§5.1", opWhere(op),
                      "nn.mcumultiply (the squeeze-excite gate) is not in TinyEngine's vocabulary; its code generator cannot compile it");
            if (o.phase != Phase::Backward && (o.kind == OpKind::Mean || o.kind == OpKind::Subtract || o.kind == OpKind::Multiply))
                error("unsupported-loss", "§5.2", opWhere(op),
                      std::string(opTypeName(o.kind)) + " in the loss: TinyEngine only compiles the cross-entropy loss (log_softmax + "
                      "cross_entropy_with_logits); the autoencoder's mean squared error has no kernels");
            if (o.phase == Phase::Backward && o.kind == OpKind::Mean)
                error("unsupported-op", "§5.3", opWhere(op), "'mean' has no TinyEngine kernel in the backward graph");
        }
    }

    // The float element-wise kernels the code generator emits for these ops (sub, where*,
    // tte_exp, and div_fp / mul for operands of one size) take the element count as a uint16_t
    // and read both operands element for element (tinyengine_function_fp.h): a count above 65,535
    // wraps (GCC's -Woverflow; bias-only:41 on mcunet-5fps turned 131,072 into 0, so its masks
    // were never applied), and an operand with fewer elements is read past its end (the faithful
    // form's x − zero_x read 3,072 floats from a one-float buffer).
    void elementwiseKernels()
    {
        for (int op : g_.order) {
            const Op& o = g_.op(op);
            if (o.phase != Phase::Backward || g_.tensor(o.output).dtype == DType::Bool) continue;   // masks become bit masks
            const char* kernel = nullptr;
            switch (o.kind) {
            case OpKind::Subtract: kernel = "sub"; break;
            case OpKind::Where: kernel = "where_zeros_inplace_bit (and the other where"; break;
            case OpKind::Exp: kernel = "tte_exp"; break;
            case OpKind::Divide: kernel = "div_fp"; break;
            case OpKind::Multiply: kernel = "mul"; break;
            default: break;
            }
            if (!kernel) continue;
            const std::int64_t n = g_.tensor(o.output).elems();
            bool sameSizes = true;
            std::string sizes;
            for (int t : o.inputs) {
                const Tensor& in = g_.tensor(t);
                if (in.dtype == DType::Bool) continue;   // where's mask (bits or bytes)
                sizes += (sizes.empty() ? "" : " and ") + Json(in.shape).dump();
                sameSizes &= in.elems() == n;
            }
            // Products and quotients by a smaller operand (scales, constants) are written as loops.
            if ((o.kind == OpKind::Multiply || o.kind == OpKind::Divide) && !sameSizes) continue;
            if (!sameSizes && o.kind == OpKind::Subtract) {
                // Issue 47: only the weight gradient's x - zero_x is the faithful form's; the others
                // (a squeeze-and-excite gate's) are in every form, so the advice names the layer instead.
                const std::string advice =
                    o.role == OpRole::WeightGrad
                        ? "export the reference form, which has no x - zero_x in weight gradients"
                        : "the x - zero_x of " + (o.layer >= 0 ? net_.layer(o.layer).name + "'s" : std::string("a layer's")) +
                              " gradient, in the reference and the faithful form alike: TinyEngine cannot train through it";
                error("elementwise-broadcast", "§9.7", opWhere(op),
                      std::string(opTypeName(o.kind)) + " of " + sizes + ": TinyEngine's " + kernel +
                          "() has no broadcasting and reads " + std::to_string(n) +
                          " elements of every operand, past the end of the smaller one (" + advice + ")");
            }
            if (n > 65535)
                error("element-count-uint16", "§9.7", opWhere(op),
                      std::string(opTypeName(o.kind)) + " on " + std::to_string(n) + " elements: TinyEngine's " + kernel +
                          (o.kind == OpKind::Where ? " kernels)" : "()") + " takes the count as a uint16_t (at most 65,535), so it would wrap to " + std::to_string(n % 65536) +
                          " and the op would not be computed");
        }
    }

    void forwardConvs()
    {
        for (int ci = 0; ci < net_.numConvs(); ++ci) {
            const Layer& l = net_.conv(ci);
            if (ci == 0) {
                if (!(l.kh == 3 && l.kw == 3 && l.stride_h == 2 && l.stride_w == 2 && l.cin == 3 && l.groups == 1))
                    error("forward-kernel", "§9.7", convWhere(l),
                          "the stem must be the 3x3 stride-2 conv on 3 input channels (the only dense 3x3 kernel with float requantisation); this one is " +
                              std::to_string(l.kh) + "x" + std::to_string(l.kw) + " stride " + std::to_string(l.stride_h) + " on " +
                              std::to_string(l.cin) + " channels");
            } else if (l.depthwise()) {
                if (!depthwiseKernelExists(l))
                    error("forward-kernel", "§9.7", convWhere(l),
                          "depthwise kernels exist for 3/5/7 x stride 1/2 only; this one is " + std::to_string(l.kh) + "x" +
                              std::to_string(l.kw) + " stride " + std::to_string(l.stride_h));
            } else if (l.groups != 1) {
                error("forward-kernel", "§9.7", convWhere(l), "grouped (not depthwise) convs have no TinyEngine kernel");
            } else if (l.kh == 1 && l.kw == 1) {
                if (l.cout % 2 != 0)
                    error("forward-kernel", "§9.7", convWhere(l),
                          "1x1 conv with an odd number of output channels (" + std::to_string(l.cout) + "): the odd-channel kernel has no float-requantisation version");
            } else {
                error("forward-kernel", "§9.7", convWhere(l),
                      "dense " + std::to_string(l.kh) + "x" + std::to_string(l.kw) + " conv: the float-requantisation library has no general dense kxk conv (only the stem)");
            }
        }
    }

    // The first op of the weight-gradient chain after the cast of the saved input (and a
    // correct-mode subtract of the zero point): a strided_slice or directly the reshape.
    bool chainHasSlice(int leafOp) const
    {
        // transpose <- sum <- reshape <- nn.conv2d(data = reshape(<data chain>), ...)
        int op = leafOp;
        for (int step = 0; step < 6 && op >= 0; ++step) {
            const Op& o = g_.op(op);
            if (o.kind == OpKind::Conv2d) {
                const int data = g_.tensor(o.inputs[0]).producer;      // reshape [1,-1,0,0]
                if (data < 0) return false;
                const int before = g_.tensor(g_.op(data).inputs[0]).producer;
                return before >= 0 && g_.op(before).kind == OpKind::StridedSlice;
            }
            op = o.inputs.empty() ? -1 : g_.tensor(o.inputs[0]).producer;
        }
        return false;
    }

    void gradients()
    {
        for (const GraphOutput& out : g_.outputs) {
            if (out.kind != GradientKind::Bias && out.kind != GradientKind::Weight) continue;
            const int p = parameter(out.info);
            if (p < 0 || g_.tensor(p).layer < 0) continue;
            const Layer& l = net_.layer(g_.tensor(p).layer);
            if (!l.isConv()) continue;
            if (l.conv_index == 0)
                error("stem-trainable", "§9.7", convWhere(l),
                      std::string("the stem's ") + (out.kind == GradientKind::Bias ? "bias" : "weight") +
                          " is updated, but the stem kernel has no _bitmask variant, so the stem cannot be trained");
            if (out.kind != GradientKind::Weight) continue;
            const TensorShape& ws = g_.tensor(out.tensor).shape;
            const int k = l.depthwise() ? ws[0] : ws[1];
            const int leaf = g_.tensor(out.tensor).producer;
            if (l.depthwise()) {
                error("depthwise-weight-update", "§9.7", convWhere(l),
                      "depthwise weight updates are not supported (TinyEngine's codegen raises NotImplementedError); update its bias only");
                continue;
            }
            if (isClassifier(l)) {
                if (l.cout != 10)
                    error("classifier-classes", "§9.7", convWhere(l),
                          "the classifier's weight-gradient kernel exists for exactly 10 classes; this one has " + std::to_string(l.cout));
                continue;
            }
            if (!weightGradientKernelExists(l))
                error("weight-gradient-kernel", "§9.7", convWhere(l),
                      "weight gradients exist only for 1x1 stride-1 convs on 4x4 or 8x8 maps with C_out % 8 == 0; this one is " +
                          std::to_string(l.kh) + "x" + std::to_string(l.kw) + " stride " + std::to_string(l.stride_h) + " on " +
                          std::to_string(l.out.h) + "x" + std::to_string(l.out.w) + " with C_out " + std::to_string(l.cout));
            if (k < l.cin && hasLiveOp(OpKind::Conv2dTranspose, g_.tensor(p).layer) && k % 4 != 0)
                error("partial-channel-kernel", "§9.7", convWhere(l),
                      "a partial update (" + std::to_string(k) + " of " + std::to_string(l.cin) +
                          " channels) of a layer whose input gradient is also needed uses the _partialCH kernels, which need k % 4 == 0");
            if (k == l.cin && !chainHasSlice(leaf))
                error("full-channel-weight-link", "§9.7", convWhere(l),
                      "a ratio-1 weight update written as cast -> reshape -> nn.conv2d fuses into group_conv_fp_kernel*_int8input_inplace, "
                      "which the library lacks (does not link); export in reference mode keeps an identity strided_slice there");
        }
        // Input gradients through the layers back-propagation passes.
        for (int op : g_.order) {
            const Op& o = g_.op(op);
            if (o.kind != OpKind::Conv2dTranspose || o.layer < 0 || !net_.layer(o.layer).isConv()) continue;
            const Layer& l = net_.layer(o.layer);
            if (l.depthwise()) {
                if (!depthwiseKernelExists(l))
                    error("input-gradient-kernel", "§9.7", convWhere(l), "input gradients through depthwise convs exist for kernels 3/5/7, stride 1/2 only");
            } else if (l.kh == 1 && l.kw == 1) {
                const bool classifierCase = isClassifier(l) && l.cout == 10 && l.in.h == 1 && l.in.w == 1 && l.cin % 8 == 0;
                const bool general = l.out.h * l.out.w >= 4 && l.cin % 4 == 0 && l.cout % 4 == 0;
                if (!classifierCase && !general)
                    error("input-gradient-kernel", "§9.7", convWhere(l),
                          "input gradients through 1x1 convs need the classifier case (10 classes, 1x1 map, C % 8 == 0) or H*W >= 4 and C % 4 == 0");
            } else {
                error("input-gradient-kernel", "§9.7", convWhere(l), "no transposed-conv kernel for a dense " + std::to_string(l.kh) + "x" + std::to_string(l.kw) + " conv");
            }
        }
        if (g_.mode == AutodiffMode::Correct) {
            bool adds = false, subtracts = false;
            for (int op : g_.order) {
                adds |= g_.op(op).role == OpRole::Accumulate;
                subtracts |= g_.op(op).role == OpRole::WeightGrad && g_.op(op).kind == OpKind::Subtract;
            }
            if (adds)
                add(FindingSeverity::Warning, "faithful-accumulation", "§8.3", "backward graph",
                    "gradients meeting at residual adds are summed with 'add' (TinyEngine maps a float add to ADD1D; not run through its codegen here)");
            if (subtracts)
                add(FindingSeverity::Warning, "faithful-zero-point", "§8.3", "backward graph",
                    "the weight gradient subtracts zero_x from the saved input (cast + subtract), which the reference compiler never emits");
        }
    }

    void idioms()
    {
        for (int op : g_.order) {
            const Op& o = g_.op(op);
            if (o.kind == OpKind::Tile && consumers_[static_cast<std::size_t>(o.output)] != 1)
                error("idiom", "§9.5", opWhere(op), "a tile must have a single consumer (the reshape of the weight-gradient chain)");
            if (o.kind == OpKind::Conv2dTranspose) {
                if (!o.attrs.contains("kernel_size") || o.attrs["kernel_size"].is_null() || o.attrs.value("kernel_layout", "") != "IOHW")
                    error("idiom", "§9.5", opWhere(op), "nn.conv2d_transpose needs kernel_size and kernel_layout \"IOHW\"");
                const int w = g_.tensor(o.inputs[1]).producer;
                if (w >= 0 && g_.op(w).kind == OpKind::Cast && consumers_[static_cast<std::size_t>(g_.op(w).output)] != 1)
                    error("idiom", "§9.5", opWhere(w), "the cast of a weight must feed exactly one nn.conv2d_transpose to be fused");
            }
        }
        for (const GraphOutput& out : g_.outputs) {
            const int leaf = g_.tensor(out.tensor).producer;
            const OpKind k = g_.op(leaf).kind;
            if (out.kind == GradientKind::Bias && k != OpKind::Sum)
                error("idiom", "§6", opWhere(leaf), "a bias-gradient leaf must be a sum (it becomes SUM + BIAS_UPDATE)");
            if (out.kind == GradientKind::Weight && k != OpKind::Transpose)
                error("idiom", "§6", opWhere(leaf), "a weight-gradient leaf must be the transpose ending the chain (it becomes the in-place GROUP_CONV)");
            if (out.kind != GradientKind::Loss && parameter(out.info) < 0)
                error("naming", "§4", opWhere(leaf), "output_info '" + out.info + "' names no parameter of the graph");
        }
    }

    void naming()
    {
        static const char* roles[] = {"weight", "bias", "zero_x", "zero_y", "scale", "qadd", "constant"};
        std::map<std::string, std::string> prefixed;   // TTEParser's name -> original
        for (const Tensor& t : g_.tensors) {
            if (t.kind != TensorKind::Parameter || t.name == "input" || t.name == "label") continue;
            const std::string parsed = !t.name.empty() && t.name[0] == 'v' ? t.name : "v" + t.name;
            auto [it, fresh] = prefixed.emplace(parsed, t.name);
            if (!fresh && it->second != t.name)
                error("naming", "§6", "parameter '" + t.name + "'", "collides with '" + it->second + "' once TTEParser prefixes 'v'");
            if (contains(t.name, "constant")) error("naming", "§4", "parameter '" + t.name + "'", "the consumer treats names containing 'constant' as constants");
        }
        // Each forward op's parameter slots must carry their own role substring and no other.
        for (int op : g_.order) {
            const Op& o = g_.op(op);
            std::vector<std::vector<const char*>> want;
            if (o.kind == OpKind::McuConv2d) want = {{}, {"weight"}, {"bias"}, {"zero_x"}, {"zero_y"}, {"scale"}};
            else if (o.kind == OpKind::McuAdd)
                want = {{}, {}, {"qadd", "zero_x"}, {"qadd", "zero_x"}, {"qadd", "scale"}, {"qadd", "scale"}, {"qadd", "zero_y"}, {"qadd", "scale"}};
            else continue;
            for (std::size_t s = 0; s < want.size() && s < o.inputs.size(); ++s) {
                const Tensor& t = g_.tensor(o.inputs[s]);
                if (t.kind != TensorKind::Parameter || want[s].empty()) continue;
                for (const char* r : want[s])
                    if (!contains(t.name, r))
                        error("naming", "§4", opWhere(op), "inputs[" + std::to_string(s) + "] '" + t.name + "' must contain '" + r + "' (the consumer matches on it)");
                for (const char* r : roles) {
                    bool own = false;
                    for (const char* w : want[s]) own |= std::string(w) == r;
                    // "zero_x" also matches inside "zero_x1"; "scale" is legitimately part of "scale_x1".
                    if (!own && contains(t.name, r))
                        error("naming", "§4", opWhere(op), "inputs[" + std::to_string(s) + "] '" + t.name + "' also contains '" + r + "', which the consumer matches on");
                }
            }
        }
    }

    void paramsAndScales()
    {
        if (!params_) return;
        for (const std::string& m : paramsMismatches(g_, *params_)) error("params", "§9.6", "params", m);
        if (params_->scales.empty()) {
            error("missing-scales", "§6", "scale.json", "no x/y scales: the codegen needs them for quantization-aware scaling of every updated conv");
            return;
        }
        std::set<int> updated;
        for (const GraphOutput& out : g_.outputs) {
            if (out.kind != GradientKind::Bias && out.kind != GradientKind::Weight) continue;
            const int p = parameter(out.info);
            if (p >= 0 && g_.tensor(p).layer >= 0) updated.insert(g_.tensor(p).layer);
        }
        for (int layer : updated) {
            const Layer& l = net_.layer(layer);
            for (const char* s : {"_x_scale", "_y_scale"})
                if (!params_->hasScale(l.ir_prefix + s))
                    error("missing-scales", "§9.6", convWhere(l), "scale.json lacks '" + l.ir_prefix + s + "' (needed for QAS of an updated conv)");
        }
    }
};

}  // namespace

std::vector<Finding> checkForTinyEngine(const TrainingGraph& g, const Network& net, const QuantizedParams* params)
{
    return Checker(g, net, params).run();
}

}  // namespace tinyscope
