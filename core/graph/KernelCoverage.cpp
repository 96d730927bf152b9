#include "graph/KernelCoverage.h"

#include "graph/ForwardLowering.h"

namespace tinyscope {

namespace {

std::string hw(const Shape3& s) { return std::to_string(s.h) + "×" + std::to_string(s.w); }

bool isStem(const Layer& c) { return !c.inputs.empty() && c.inputs[0] < 0; }

// The stem the library has: 3×3, stride 2, pad 1, 3 input channels.
bool isLibraryStem(const Layer& c)
{
    return isStem(c) && c.kh == 3 && c.kw == 3 && c.stride_h == 2 && c.stride_w == 2 && c.pad_t == 1 && c.cin == 3;
}

bool isDense(const Layer& c) { return c.groups == 1 && (c.kh > 1 || c.kw > 1); }

std::string joinAnd(const std::vector<std::string>& parts)
{
    std::string s;
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return s;
}

// Names of the first few layers in `names`, "and N more".
std::string someNames(const std::vector<std::string>& names)
{
    std::string s;
    const std::size_t shown = std::min<std::size_t>(names.size(), 3);
    for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + names[i];
    if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
    return s;
}

}  // namespace

bool depthwiseKernelExists(const Layer& c)
{
    return c.kh == c.kw && (c.kh == 3 || c.kh == 5 || c.kh == 7) && c.stride_h == c.stride_w && (c.stride_h == 1 || c.stride_h == 2);
}

bool weightGradientKernelExists(const Layer& c)
{
    return !c.depthwise() && c.groups == 1 && c.kh == 1 && c.kw == 1 && c.stride_h == 1 && c.stride_w == 1 &&
           ((c.out.h == 4 && c.out.w == 4) || (c.out.h == 8 && c.out.w == 8)) && c.cout % 8 == 0;
}

std::vector<char> convsPassingGradient(const Network& net, const ResolvedScheme& scheme)
{
    // A layer carries a gradient when it or a layer before it (on some path) is updated.
    std::vector<char> carries(net.layers.size(), 0);
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
        const Layer& layer = net.layers[l];
        if (layer.isConv()) {
            const ConvUpdate& u = scheme.conv(layer.conv_index);
            carries[l] = u.bias || u.weight();
        }
        for (int p : layer.inputs)
            if (p >= 0 && carries[static_cast<std::size_t>(p)]) carries[l] = 1;
    }
    std::vector<char> out(static_cast<std::size_t>(net.numConvs()), 0);
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const int p = net.conv(ci).inputs[0];
        out[static_cast<std::size_t>(ci)] = p >= 0 && carries[static_cast<std::size_t>(p)];
    }
    return out;
}

std::vector<CoverageFinding> kernelCoverageFindings(const Network& net, const ResolvedScheme& scheme)
{
    std::vector<CoverageFinding> f;
    auto model = [&](std::string m) { f.push_back({-1, std::move(m)}); };

    // The model, whatever the scheme.
    const std::string obstacle = loweringObstacle(net);
    if (!obstacle.empty()) model("no int8 training graph: " + obstacle);
    std::vector<std::string> se, dense, odd;
    for (const Layer& l : net.layers) {
        if (l.kind == LayerKind::ChannelScale) se.push_back(l.name);
        if (!l.isConv() || l.linear) continue;
        if (isDense(l) && !isLibraryStem(l)) dense.push_back(l.name);
        if (l.kh == 1 && l.kw == 1 && l.groups == 1 && l.cout % 2 != 0) odd.push_back(l.name);
    }
    if (!se.empty())
        model("squeeze-excite gates (nn.mcumultiply: " + someNames(se) + ") are outside TinyEngine's op vocabulary");
    if (net.loss == LossKind::MeanSquaredError)
        model("the mean-squared-error loss (subtract → multiply → mean) is outside TinyEngine's op vocabulary");
    if (!dense.empty())
        model("no float-requantised (_fpreq) forward kernel for dense k×k convs other than the 3×3/stride-2 stem on 3 "
              "channels (" + someNames(dense) + ")");
    if (!odd.empty()) model("1×1 convs with an odd output-channel count have no _fpreq kernel (" + someNames(odd) + ")");

    // Per conv, for this scheme.
    const std::vector<char> passes = convsPassingGradient(net, scheme);
    const int head = net.numConvs() - 1;
    for (int ci = 0; ci <= head; ++ci) {
        const Layer& c = net.conv(ci);
        const ConvUpdate& u = scheme.conv(ci);
        auto conv = [&](std::string m) { f.push_back({ci, std::move(m)}); };
        const bool inputGrad = passes[static_cast<std::size_t>(ci)];
        if (ci == head) {
            if (net.num_outputs != 10)
                conv("the classifier's weight-gradient kernel exists for exactly 10 classes (this head has " +
                     std::to_string(c.cout) + ")");
            if (inputGrad && (c.in.h != 1 || c.in.w != 1 || c.cin % 8 != 0 || net.num_outputs != 10))
                conv("the input gradient through the classifier needs 10 classes, a 1×1 input and C_in % 8 == 0 (C_in " +
                     std::to_string(c.cin) + ", input " + hw(c.in) + ")");
            continue;
        }
        if (isStem(c) && (u.bias || u.weight())) {
            conv("the stem cannot be trained: its kernel has no _bitmask variant");
            continue;
        }
        if (u.weight()) {
            if (c.depthwise()) {
                conv("depthwise weight update: the code generator raises NotImplementedError (bias updates are fine)");
            } else {
                std::vector<std::string> why;
                if (c.kh != 1 || c.kw != 1) why.push_back("the kernel is " + std::to_string(c.kh) + "×" + std::to_string(c.kw));
                if (c.stride_h != 1 || c.stride_w != 1) why.push_back("the stride is " + std::to_string(c.stride_h));
                if (!((c.out.h == 4 && c.out.w == 4) || (c.out.h == 8 && c.out.w == 8))) why.push_back("the map is " + hw(c.out));
                if (c.cout % 8 != 0) why.push_back("C_out is " + std::to_string(c.cout));
                if (!weightGradientKernelExists(c))
                    conv("weight gradient needs a 1×1 stride-1 conv on a 4×4 or 8×8 map with C_out % 8 == 0; " + joinAnd(why));
                else if (u.k < c.cin && inputGrad && u.k % 4 != 0)
                    conv("a partial-channel weight update whose input gradient is also computed needs k % 4 == 0 (k = " +
                         std::to_string(u.k) + ")");
            }
        }
        if (inputGrad) {
            if (c.depthwise()) {
                if (!depthwiseKernelExists(c))
                    conv("the input gradient through a depthwise conv has kernels for 3/5/7 × stride 1/2 only (this one is " +
                         std::to_string(c.kh) + "×" + std::to_string(c.kw) + " stride " + std::to_string(c.stride_h) + ")");
            } else if (c.kh == 1 && c.kw == 1 && c.groups == 1) {
                if (static_cast<std::int64_t>(c.out.h) * c.out.w < 4 || c.cin % 4 != 0)
                    conv("the input gradient through a 1×1 conv needs H·W ≥ 4 and C_in % 4 == 0 (map " + hw(c.out) + ", C_in " +
                         std::to_string(c.cin) + ")");
            } else {
                conv("no input-gradient kernel for a " + std::to_string(c.kh) + "×" + std::to_string(c.kw) +
                     (c.groups > 1 ? " grouped" : " dense") + " conv (an update below back-propagates through it)");
            }
        }
    }
    return f;
}

}  // namespace tinyscope
