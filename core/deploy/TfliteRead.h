#pragma once
// A Tinyscope int8 .tflite (deploy/TfliteExport.h) read back into the values Int8Forward runs: the
// Network, its QuantizedParams and the effective scales buildTflite would have been given /
// produced, so that Int8Forward(lowerForward(net), params, Int8Arithmetic::Tflite,
// &effective_scales) computes exactly what TFLM computes on the file. Only what the writer emits
// is read (decision: a foreign .tflite is refused, naming its first op or option the writer never
// emits); every refusal is one InputError line "<file>: <reason>", before anything else happens.
// The FlatBuffers verifier runs on the bytes first (generated from deploy/tflite_subset.fbs).
// What the file cannot say (layer roles, BN/bias flags, the scale.json doubles behind its float32
// scales) is inferred so that buildTflite of what was read writes the same bytes
// (docs/DEPLOY.md "Reading a .tflite back"). Torch-free, Qt-free.
#include "deploy/TfliteExport.h"
#include "tinyengine/Int8Forward.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tinyscope {

struct TfliteFile {
    Network net;                          // layers named as the file's tensors; prefixes "layer<i>"
    QuantizedParams params;               // the params pickle + scale.json buildTflite would be given
    TfliteMetadata meta;                  // the metadata buildTflite would be given
    // Per conv ("<prefix>_scale"): s_x·s_w[o]/s_y from the file's float32 scales, as TfliteModel's.
    std::map<std::string, std::vector<double>> effective_scales;
    TfliteTensorInfo input, output;
    Json metadata;                        // the "tinyscope" metadata as stored
    std::map<std::string, int> ops;       // op type ("CONV_2D") -> count
    std::int64_t bytes = 0;
    bool rebuilds_exactly = false;        // buildTflite(net, params, meta) gives the file's bytes
};

// Reads the bytes of a .tflite; `fileName` names it in messages. Throws InputError
// "<fileName>: <reason>".
TfliteFile parseTflite(const std::string& bytes, const std::string& fileName);
TfliteFile readTflite(const std::string& path);

// The int8 outputs Int8Forward computes on `images` inputs in the FILE's layout (NHWC int8, each
// the product of input.shape bytes, back to back), one vector per image in the file's output
// layout. Tflite: TFLM's arithmetic with the file's effective scales; TinyEngine / Exact: each
// channel's float32 scale is the file's effective scale rounded to float32 (what a code generator
// reading the file computes). Throws InputError when the inputs have the wrong size.
std::vector<std::vector<std::int8_t>> tfliteReferenceOutputs(const TfliteFile& f, const std::vector<std::int8_t>& nhwcInputs, int images,
                                                             Int8Arithmetic arithmetic = Int8Arithmetic::Tflite);

}  // namespace tinyscope
