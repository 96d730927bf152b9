#include "graph/GradientRules.h"

#include "Error.h"

#include <array>

namespace tinyscope {

void RuleContext::begin(const Op& op, std::vector<char> wanted, int weightChannels)
{
    op_ = &op;
    wanted_ = std::move(wanted);
    grads_.assign(op.inputs.size(), -1);
    weight_channels_ = weightChannels;
}

int RuleContext::clampMask(int x)
{
    const OpRole was = b.role();
    b.setRole(OpRole::Mask);
    const int c = b.cast(x, DType::Float32);
    const int m = b.multiply(b.greaterEqual(c, b.constant(-128.0)), b.lessEqual(c, b.constant(127.0)));
    b.setRole(was);
    return m;
}

int RuleContext::perChannel(int param) { return b.reshape(param, {1, -1, 1, 1}); }

int RuleContext::weightGradient(int gs)
{
    // dW[o,i] = Σ_hw x[i](·) ⋆ gs[o]: the input channels become groups of one grouped conv of the
    // (sliced) saved input with the output gradient tiled once per input channel; the conv's
    // stride becomes the dilation. k < C: only the first k input channels (sparse update).
    const Op& conv = op();
    const TensorShape xs = shape(conv.inputs[0]), ws = shape(conv.inputs[1]), gsh = shape(gs);
    const int C = xs[1], O = ws[0], kh = ws[2], kw = ws[3];
    const int groups = conv.attrs["groups"].get<int>();
    const bool depthwise = groups > 1 && groups == C && groups == O;
    if (groups != 1 && !depthwise)
        throw InputError("layer " + std::to_string(conv.layer) + ": the weight gradient of a grouped (not depthwise) conv is not supported");
    const int k = weightChannels() > 0 && weightChannels() < C ? weightChannels() : C;

    b.setRole(OpRole::WeightGrad);
    int data = b.cast(conv.inputs[0], DType::Float32);
    if (mode == AutodiffMode::Correct) data = b.subtract(data, b.cast(conv.inputs[3], DType::Float32));
    int grad = gs;
    if (k < C) {
        data = b.stridedSlice(data, {0, 0, 0, 0}, {xs[0], k, xs[2], xs[3]});
        if (depthwise) grad = b.stridedSlice(gs, {0, 0, 0, 0}, {gsh[0], k, gsh[2], gsh[3]});
    }
    const int inner = depthwise ? 1 : k;   // input channels per group of the original conv
    const int outer = depthwise ? k : O;   // output channels whose gradient is formed
    const int tiled = b.reshape(b.tile(grad, {1, inner, 1, 1}), {-1, 1, 0, 0});
    const int flat = b.reshape(data, {1, -1, 0, 0});
    Conv2dAttrs a;
    a.stride_h = a.stride_w = 1;   // the forward conv's dilation (always 1 here)
    a.pad_t = conv.attrs["padding"][0].get<int>();
    a.pad_l = conv.attrs["padding"][1].get<int>();
    a.pad_b = conv.attrs["padding"][2].get<int>();
    a.pad_r = conv.attrs["padding"][3].get<int>();
    a.dil_h = conv.attrs["strides"][0].get<int>();
    a.dil_w = conv.attrs["strides"][1].get<int>();
    a.groups = k;
    const int gc = b.conv2d(flat, tiled, a);
    const int ph = shape(gc)[2], pw = shape(gc)[3];
    int w = b.transpose(b.sum(b.reshape(gc, {1, inner, outer, ph, pw}), {0}, false, false), {1, 0, 2, 3});
    if (ph > kh || pw > kw) w = b.stridedSlice(w, {0, 0, 0, 0}, {outer, inner, kh, kw});   // even maps with stride 2
    return w;
}

namespace {

// y = clamp(x, −128, 127): g where x was inside the range (the 1-bit mask), else 0.
void truncateRule(RuleContext& c, int g)
{
    const int mask = c.clampMask(c.op().inputs[0]);
    c.give(0, c.b.where(mask, g, c.b.zeros(c.shape(g))));
}

// y = round((conv(x − zx, W) + b) · s) + zy, round straight-through:
//   gs = g·s;  db = Σ_hw gs;  dW = (x − zx) ⋆ gs;  dx = conv_transposeᵀ(gs, W).
void mcuConvRule(RuleContext& c, int g)
{
    const Op& op = c.op();
    const int gs = c.b.multiply(g, c.perChannel(op.inputs[5]));
    if (c.wants(2)) {
        c.b.setRole(OpRole::BiasGrad);
        c.give(2, c.b.sum(gs, {1}, false, true));
    }
    if (c.wants(1)) c.give(1, c.weightGradient(gs));
    if (c.wants(0)) {
        c.b.setRole(OpRole::InputGrad);
        const TensorShape xs = c.shape(op.inputs[0]), ws = c.shape(op.inputs[1]), gsh = c.shape(gs);
        Conv2dAttrs a;
        a.stride_h = op.attrs["strides"][0].get<int>();
        a.stride_w = op.attrs["strides"][1].get<int>();
        a.pad_t = op.attrs["padding"][0].get<int>();
        a.pad_l = op.attrs["padding"][1].get<int>();
        a.pad_b = op.attrs["padding"][2].get<int>();
        a.pad_r = op.attrs["padding"][3].get<int>();
        a.groups = op.attrs["groups"].get<int>();
        const int outH = (gsh[2] - 1) * a.stride_h - a.pad_t - a.pad_b + ws[2];
        const int outW = (gsh[3] - 1) * a.stride_w - a.pad_l - a.pad_r + ws[3];
        const int w = c.b.cast(op.inputs[1], DType::Float32);
        c.give(0, c.b.conv2dTranspose(gs, w, a, xs[1], ws[2], ws[3], xs[2] - outH, xs[3] - outW));
    }
    c.b.setRole(OpRole::ZeroGrad);   // reference mode asks for these (the classifier's dummies)
    for (int slot = 3; slot < 6; ++slot)
        if (c.wants(slot)) c.give(slot, c.b.zeros(c.shape(op.inputs[slot]), c.t(op.inputs[slot]).dtype));
}

// y = round(((x1 − z1)·s1 + (x2 − z2)·s2) / sy) + zy:  dx1 = g/sy·s1,  dx2 = g/sy·s2.
void mcuAddRule(RuleContext& c, int g)
{
    const Op& op = c.op();
    const int gd = c.b.divide(g, c.perChannel(op.inputs[7]));
    if (c.wants(0)) c.give(0, c.b.multiply(gd, c.perChannel(op.inputs[4])));
    if (c.wants(1)) c.give(1, c.b.multiply(gd, c.perChannel(op.inputs[5])));
}

// y = round((x1 − z1)·s1·(x2 − z2)·s2 / sy) + zy, x1 the C×1×1 gate:
//   dx2 = g·s1·s2/sy·(x1 − z1);  dx1 = Σ_hw g·s1·s2/sy·(x2 − z2).
void mcuMultiplyRule(RuleContext& c, int g)
{
    const Op& op = c.op();
    auto centred = [&](int x, int z) { return c.b.subtract(c.b.cast(x, DType::Float32), c.b.cast(z, DType::Float32)); };
    const int gd = c.b.multiply(c.b.divide(g, c.perChannel(op.inputs[7])),
                                c.b.multiply(c.perChannel(op.inputs[4]), c.perChannel(op.inputs[5])));
    if (c.wants(1)) c.give(1, c.b.multiply(gd, centred(op.inputs[0], op.inputs[2])));
    if (c.wants(0)) c.give(0, c.b.sum(c.b.multiply(gd, centred(op.inputs[1], op.inputs[3])), {2, 3}, true, false));
}

// y = round(mean_hw x):  dx = g/(H·W) broadcast over H×W.
void mcuMeanRule(RuleContext& c, int g)
{
    const TensorShape xs = c.shape(c.op().inputs[0]);
    const int scaled = c.b.multiply(g, c.b.constant(1.0 / xs[2] / xs[3]));
    c.give(0, c.b.multiply(scaled, c.b.ones(xs)));
}

// reshape: the gradient takes the input's shape back.
void reshapeRule(RuleContext& c, int g)
{
    const TensorShape xs = c.shape(c.op().inputs[0]);
    c.give(0, c.b.reshape(g, std::vector<int>(xs.begin(), xs.end())));
}

// cast: identity.
void castRule(RuleContext& c, int g) { c.give(0, g); }

// y = log_softmax(x):  dx = g − Σ g · exp(y).
void logSoftmaxRule(RuleContext& c, int g)
{
    const int axis = c.op().attrs["axis"].get<int>();
    const int y = c.op().output;
    c.give(0, c.b.subtract(g, c.b.multiply(c.b.sum(g, {axis}, true, false), c.b.exp(y))));
}

// L = −Σ label · logp:  dlogp = −g · label (the label gets no gradient).
void crossEntropyRule(RuleContext& c, int g)
{
    if (c.wants(0)) c.give(0, c.b.multiply(c.b.negative(g), c.op().inputs[1]));
}

// y = a − b.
void subtractRule(RuleContext& c, int g)
{
    if (c.wants(0)) c.give(0, g);
    if (c.wants(1)) c.give(1, c.b.negative(g));
}

// y = a · b.
void multiplyRule(RuleContext& c, int g)
{
    if (c.wants(0)) c.give(0, c.b.multiply(g, c.op().inputs[1]));
    if (c.wants(1)) c.give(1, c.b.multiply(g, c.op().inputs[0]));
}

// y = mean(x) over all elements:  dx = g/N broadcast.
void meanRule(RuleContext& c, int g)
{
    const TensorShape xs = c.shape(c.op().inputs[0]);
    const TensorShape ys = c.shape(c.op().output);
    c.give(0, c.b.multiply(c.b.ones(xs), c.b.multiply(g, c.b.constant(static_cast<double>(shapeElems(ys)) /
                                                                        static_cast<double>(shapeElems(xs))))));
}

struct RuleEntry {
    OpKind kind;
    GradientRule rule;
};

constexpr std::array<RuleEntry, 12> kRules = {{
    {OpKind::McuTruncate, truncateRule},
    {OpKind::McuConv2d, mcuConvRule},
    {OpKind::McuAdd, mcuAddRule},
    {OpKind::McuMultiply, mcuMultiplyRule},
    {OpKind::McuMean, mcuMeanRule},
    {OpKind::Reshape, reshapeRule},
    {OpKind::Cast, castRule},
    {OpKind::LogSoftmax, logSoftmaxRule},
    {OpKind::CrossEntropyWithLogits, crossEntropyRule},
    {OpKind::Subtract, subtractRule},
    {OpKind::Multiply, multiplyRule},
    {OpKind::Mean, meanRule},
}};

}  // namespace

GradientRule gradientRule(OpKind kind)
{
    for (const RuleEntry& e : kRules)
        if (e.kind == kind) return e.rule;
    return nullptr;
}

}  // namespace tinyscope
