#pragma once
// The TFLite writer's layout decisions, in one place for the writer (TfliteExport) and for TFLM's
// arena replay (TflmArena), which must make exactly the same ones: TFLite's SAME output size and
// padding, which padding a layer gets, and which layer is the classifier (a FULLY_CONNECTED op).
#include "zoo/Network.h"

#include <algorithm>
#include <utility>

namespace tinyscope {

// Output size TFLite computes for SAME padding, and the (before, after) padding SAME implies.
inline int tfliteSameOut(int in, int stride) { return (in + stride - 1) / stride; }
inline std::pair<int, int> tfliteSamePads(int in, int kernel, int stride)
{
    const int total = std::max((tfliteSameOut(in, stride) - 1) * stride + kernel - in, 0);
    return {total / 2, total - total / 2};
}

// VALID without padding (floor((in − k)/s) + 1, as PyTorch), SAME when it reproduces the layer's
// padding, otherwise an explicit PAD op before a VALID conv.
enum class TflitePadding { Valid, Same, ExplicitPad };
inline TflitePadding tflitePaddingOf(const Layer& l)
{
    if (l.pad_t == 0 && l.pad_b == 0 && l.pad_l == 0 && l.pad_r == 0) return TflitePadding::Valid;
    const auto [st, sb] = tfliteSamePads(l.in.h, l.kh, l.stride_h);
    const auto [sl, sr] = tfliteSamePads(l.in.w, l.kw, l.stride_w);
    if (tfliteSameOut(l.in.h, l.stride_h) == l.out.h && tfliteSameOut(l.in.w, l.stride_w) == l.out.w && st == l.pad_t && sb == l.pad_b &&
        sl == l.pad_l && sr == l.pad_r)
        return TflitePadding::Same;
    return TflitePadding::ExplicitPad;
}

// The last layer as a 1×1 convolution of a 1×1 input: written as FULLY_CONNECTED.
inline bool isTfliteClassifier(const Network& net, int i)
{
    const Layer& l = net.layer(i);
    return i + 1 == static_cast<int>(net.layers.size()) && l.isConv() && l.groups == 1 && l.kh == 1 && l.kw == 1 && l.in.h == 1 && l.in.w == 1;
}

}  // namespace tinyscope
