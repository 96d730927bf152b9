#pragma once
// A quantized network (the Network + QuantizedParams that Int8Forward runs) as a fully int8
// TensorFlow Lite flatbuffer (schema version 3), written with the project's own schema subset
// (deploy/tflite_subset.fbs): NHWC tensors; int8 input and output with their scale and zero
// point; per-output-channel symmetric int8 weights (zero point 0; quantized_dimension 0 for
// CONV_2D / FULLY_CONNECTED, 3 for DEPTHWISE_CONV_2D's [1, KH, KW, C]); int32 biases with scale
// s_x·s_w[o]; per-tensor asymmetric int8 activations. Ops: CONV_2D, DEPTHWISE_CONV_2D, PAD
// (explicit paddings SAME cannot express), ADD, MUL (squeeze-excite gate, broadcast),
// AVERAGE_POOL_2D (global pooling), RESHAPE + FULLY_CONNECTED (the classifier) — builtin ops
// that TFLM's reference kernels implement. The rules (tensor scales, s_w = s_eff·s_y/s_x,
// padding, fused activations, the classifier) are in docs/DEPLOY.md "TFLite (int8)".
// Torch-free, Qt-free.
#include "data/Image.h"
#include "io/JsonFile.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tinyscope {

// What the file's "tinyscope" metadata buffer (JSON) says besides what the network implies
// (input size, MACs, peak SRAM, weight bytes).
struct TfliteMetadata {
    std::string channel_order = "RGB";
    Normalization norm;                   // mean / std the float image is normalised with
    std::vector<std::string> labels;      // class labels (may be empty)
    Json config;                          // the subnet config (null for a zoo model)
    Json extra = Json::object();          // merged into the JSON (board, source, ...)
    std::string description;              // Model.description (default: "Tinyscope int8 export of <name>")
};

struct TfliteTensorInfo {
    std::vector<int> shape;               // NHWC (or [1, classes])
    double scale = 1.0;
    int zero_point = 0;
    Json toJson() const;                  // {shape, scale, zero_point}
};

struct TfliteModel {
    std::string bytes;                    // the flatbuffer
    std::map<std::string, int> ops;       // op type ("CONV_2D") -> count
    TfliteTensorInfo input, output;
    Json metadata;                        // the "tinyscope" metadata as written
    // Per conv ("<prefix>_scale"): the effective scales TFLite derives from the file's float32
    // tensor scales, s_x·s_w[o]/s_y in double (Int8Forward's Tflite arithmetic takes them).
    std::map<std::string, std::vector<double>> effective_scales;
    Json toJson() const;                  // {format: "tflite", bytes, ops, input, output}
};

// Why `net` cannot be written as TFLite ("" when it can): the first layer whose op has no int8
// TFLite form, named with its index, name and kind.
std::string tfliteObstacle(const Network& net);

// Builds the file in memory. Throws InputError naming the layer and the op when the network or
// its parameters cannot be expressed (an op without a TFLite form, a missing or mis-shaped
// parameter, a tensor that two ops need with different zero points or scales).
TfliteModel buildTflite(const Network& net, const QuantizedParams& params, const TfliteMetadata& meta = {});

// buildTflite, then an atomic write of `path` (nothing is written when the model is refused).
TfliteModel writeTflite(const std::string& path, const Network& net, const QuantizedParams& params, const TfliteMetadata& meta = {});

}  // namespace tinyscope
