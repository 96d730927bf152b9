#pragma once
// n-bit linear quantization as Lab 2 of MIT 6.5940 defines it, on plain float arrays (issue 50,
// docs/COMPRESSION.md). Torch-free and Qt-free. Bit widths 1–8 (q in [−2^(n−1), 2^(n−1) − 1]);
// the workbench's int8 post-training quantizer (nn/quantize) is separate and unchanged.
//
// * get_quantized_range(n): [−2^(n−1), 2^(n−1) − 1].
// * get_quantization_scale_and_zero_point (asymmetric, activations): scale = (r_max − r_min) /
//   (q_max − q_min) and zero_point = q_min − r_min / scale in double, clamped to the range, else
//   rounded half to even (Python's round).
// * linear_quantize: q = clamp(round(r / scale) + zero_point) — r / scale in float32 (PyTorch
//   divides a float32 tensor by the scale as float32), round half to even (torch.round).
// * Weights: per output channel (dim 0), symmetric: scale = max(|w_oc|max, 5e-7) / q_max,
//   zero point 0 (linear_quantize_weight_per_channel).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct QuantizedRange {
    int min = 0, max = 0;
};
QuantizedRange quantizedRange(int bits);   // InputError outside 1–8
// Bit widths written as "8,4,2" (spaces allowed): InputError naming the first that is not a whole
// number 1–8, or for none at all.
std::vector<int> parseBitWidths(const std::string& text);

struct ScaleZeroPoint {
    double scale = 1;
    int zero_point = 0;
};
// From the tensor's min and max (asymmetric).
ScaleZeroPoint scaleAndZeroPoint(const float* r, std::size_t n, int bits);

// q = clamp(round(r / scale) + zero_point, q_min, q_max).
std::vector<std::int8_t> linearQuantize(const float* r, std::size_t n, int bits, double scale, int zeroPoint);
// r' = scale · (q − zero_point), in float32 as the lab's linear dequantization.
std::vector<float> linearDequantize(const std::vector<std::int8_t>& q, double scale, int zeroPoint);

// A weight tensor [O][rest…] quantized per output channel, symmetric.
struct PerChannelQuantized {
    std::vector<std::int8_t> q;
    std::vector<double> scales;   // one per output channel
};
PerChannelQuantized quantizeWeightPerChannel(const float* w, int outputs, std::size_t perOutput, int bits);
// Its reconstruction (q · scale of the channel), the weights a quantized model computes with.
std::vector<float> dequantizePerChannel(const PerChannelQuantized& p, std::size_t perOutput);

}  // namespace tinyscope
