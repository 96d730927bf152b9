#pragma once
// Int8 post-training quantization of a float network (TINYENGINE_JSON_SPEC.md §7): BatchNorm
// folded into the convs, per-output-channel symmetric int8 weights (zero point 0), int32 biases
// in accumulator units (b / (s_W·s_x)), per-tensor asymmetric int8 activations calibrated
// (min/max) on N images, ReLU/ReLU6 folded into the int8 clamp (zero_y = −128, range [0, max]),
// h-sigmoid folded as (x + 3)/6 clamped to [0, 1]. The result is a QuantizedParams under the
// training graph's parameter names, plus scale.json's x/y scales of every conv.
// Includes LibTorch: only for the translation units that quantize.
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace tinyscope {

class Subnet;
class ZooModuleImpl;

// A float network with BN folded: per Network layer (convs only) an OIHW weight and a bias.
struct FloatModel {
    Network net;
    std::vector<at::Tensor> weight, bias;
    std::string description;
};

// From an extracted design-space subnet (its BN running statistics as they are; re-calibrate
// first) and the matching `networkFromSubnet` network.
FloatModel floatModelFromSubnet(const Network& net, const Subnet& subnet);
// From a zoo module (PyTorch's default initialisation unless trained).
FloatModel floatModelFromZoo(ZooModuleImpl& module);
// The float network an int8 model stands for: W = W̄·s_W, b = b̄·s_W·s_x with s_W = s_eff·s_y/s_x
// (needs every conv's x/y scale in `p.scales`). Throws InputError naming a missing scale.
FloatModel dequantizedModel(const Network& net, const QuantizedParams& p);

// Per-layer output ranges seen by a float forward (and the network input's).
struct ActivationRanges {
    std::vector<float> lo, hi;
    float in_lo = 0, in_hi = 0;
    bool seen = false;
};

// Float forward of [N, C, H, W] -> logits [N, K]; records ranges when given.
at::Tensor floatForward(const FloatModel& m, const at::Tensor& x, ActivationRanges* ranges = nullptr);

// Quantizes `m` with ranges calibrated on `calibration` ([N, C, H, W] normalised images).
QuantizedParams quantizeModel(const FloatModel& m, const at::Tensor& calibration);

}  // namespace tinyscope
