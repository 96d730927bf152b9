#include "graph/ForwardLowering.h"

#include "Error.h"
#include "graph/GraphBuilder.h"

namespace tinyscope {

std::string loweringObstacle(const Network& net)
{
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        switch (l.kind) {
        case LayerKind::Conv:
            if (l.act == Activation::GELU) break;
            continue;
        case LayerKind::Add:
        case LayerKind::GlobalAvgPool:
        case LayerKind::ChannelScale:
            if (l.act == Activation::GELU) break;
            continue;
        default:
            break;
        }
        return "layer " + std::to_string(i) + " '" + l.name + "' (" + layerKindName(l.kind) +
               ") has no op in TinyEngine's int8 training vocabulary (nn.mcuconv2d, nn.mcuadd, mcumean)";
    }
    return "";
}

TrainingGraph lowerForward(const Network& net)
{
    const std::string obstacle = loweringObstacle(net);
    if (!obstacle.empty()) throw InputError(net.name + ": " + obstacle);

    TrainingGraph g;
    g.model = net.name;
    GraphBuilder b(g);
    g.input = b.parameter("input", DType::Int8, {1, net.input.c, net.input.h, net.input.w});
    std::vector<int> out(net.layers.size(), -1);
    auto src = [&](int layer) { return layer < 0 ? g.input : out[static_cast<std::size_t>(layer)]; };

    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        const int li = static_cast<int>(i);
        b.setContext(Phase::Forward, OpRole::Forward, li);
        auto p = [&](const char* suffix, DType t, TensorShape s) { return b.parameter(l.ir_prefix + suffix, t, std::move(s), li); };
        // The eight operands shared by nn.mcuadd and nn.mcumultiply.
        auto binary = [&](bool multiply) {
            const int x1 = src(l.inputs[0]), x2 = src(l.inputs[1]);
            const int zx1 = p("_zero_x1", DType::Int8, {1}), zx2 = p("_zero_x2", DType::Int8, {1});
            const int sx1 = p("_scale_x1", DType::Float32, {1}), sx2 = p("_scale_x2", DType::Float32, {1});
            const int zy = p("_zero_y", DType::Int8, {1}), sy = p("_scale_y", DType::Float32, {1});
            return multiply ? b.mcuMultiply(x1, x2, zx1, zx2, sx1, sx2, zy, sy) : b.mcuAdd(x1, x2, zx1, zx2, sx1, sx2, zy, sy);
        };
        switch (l.kind) {
        case LayerKind::Conv: {
            const int x = src(l.inputs[0]);
            const int w = p("_weight", DType::Int8, {l.cout, l.cin / l.groups, l.kh, l.kw});
            const int bias = p("_bias", DType::Int32, {l.cout});
            const int zx = p("_zero_x", DType::Int8, {1});
            const int zy = p("_zero_y", DType::Int8, {1});
            const int s = p("_scale", DType::Float32, {l.cout});
            Conv2dAttrs a;
            a.stride_h = l.stride_h;
            a.stride_w = l.stride_w;
            a.pad_t = l.pad_t;
            a.pad_l = l.pad_l;
            a.pad_b = l.pad_b;
            a.pad_r = l.pad_r;
            a.groups = l.groups;
            out[i] = b.mcuTruncate(b.mcuConv2d(x, w, bias, zx, zy, s, a));
            break;
        }
        case LayerKind::Add:
            out[i] = b.mcuTruncate(binary(false));
            break;
        case LayerKind::ChannelScale:
            out[i] = b.mcuTruncate(binary(true));
            break;
        case LayerKind::GlobalAvgPool:
            out[i] = b.mcuMean(src(l.inputs[0]));
            break;
        default:
            throw InputError(net.name + ": layer '" + l.name + "' cannot be lowered");
        }
    }

    b.setContext(Phase::Loss, OpRole::Loss, -1);
    const int logits = b.cast(b.reshape(out.back(), {0, 0}), DType::Float32);
    g.label = b.parameter("label", DType::Float32, {1, net.num_outputs});
    if (net.loss == LossKind::CrossEntropy) {
        g.loss = b.crossEntropy(b.logSoftmax(logits), g.label);
    } else {
        const int d = b.subtract(logits, g.label);
        g.loss = b.mean(b.multiply(d, d), {}, false, true);
    }
    g.forward_ops = static_cast<int>(g.ops.size());
    g.outputs.push_back(GraphOutput{g.loss, "fwd@output", GradientKind::Loss, -1, -1});
    return g;
}

}  // namespace tinyscope
