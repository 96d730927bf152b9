#pragma once
// A float network as an ONNX model (opset 13, float32, NCHW, batch 1), written with protobuf from
// Debian's onnx.proto: Conv (group = channels for depthwise; BN already folded into weight and
// bias), Relu, Clip (ReLU6, min/max as inputs), HardSigmoid (ReLU6(x + 3)/6), Mul (squeeze-excite
// gate), Add (residual), GlobalAveragePool and a final Flatten to [1, K] logits. Torch-free: the
// weights come in as plain float arrays. docs/DEPLOY.md "ONNX".
#include "zoo/Network.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

// What the writer needs: a finalized network and, for every conv layer, its OIHW weight
// (cout · cin/groups · kh · kw floats) and bias (cout floats); other layers' entries are empty.
struct OnnxSource {
    Network network;
    std::vector<std::vector<float>> weight, bias;
    std::vector<std::pair<std::string, std::string>> metadata;   // metadata_props, in this order
    std::string doc;                                              // ModelProto.doc_string
};

struct OnnxModel {
    std::string bytes;                          // serialized ModelProto
    std::map<std::string, int> ops;             // op type -> node count
    std::vector<std::int64_t> input_shape, output_shape;
    std::string input_name, output_name;
};

// Builds the model. A layer the writer cannot express (LayerNorm, attention, GELU, ...) or weights
// of the wrong size: InputError naming the network, the layer and the op, nothing built.
OnnxModel buildOnnxModel(const OnnxSource& source);

// Writes `model.bytes` atomically (temporary file + rename).
void writeOnnxModel(const OnnxModel& model, const std::string& path);

}  // namespace tinyscope
