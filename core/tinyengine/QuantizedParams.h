#pragma once
// The int8 parameters of a quantized network as TinyEngine consumes them: the params pickle
// (dict[name → numpy.ndarray]: int8 OIHW weights, int32 biases, int8 zero points of shape [1],
// float32 effective scales [O] and add scales [1]) and scale.json (`<prefix>_x_scale`,
// `<prefix>_y_scale` of every conv, the s_x / s_y that QAS needs). TINYENGINE_JSON_SPEC.md §6–§7.
// Torch-free.
#include "graph/TrainingGraph.h"
#include "io/Pickle.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

struct QuantizedParams {
    std::map<std::string, NdArray> arrays;   // the params pickle
    std::vector<std::string> order;          // key order of the pickle (file order / graph order)
    std::map<std::string, double> scales;    // scale.json
    std::string source;                      // where the arrays came from (messages)

    void set(const std::string& name, NdArray a);   // keeps first-insertion order
    bool has(const std::string& name) const { return arrays.count(name) > 0; }
    const NdArray& array(const std::string& name) const;   // throws InputError naming `source`
    // Element access by name (any dtype), as double.
    double value(const std::string& name, std::int64_t i = 0) const;
    std::vector<float> floats(const std::string& name) const;
    bool hasScale(const std::string& key) const { return scales.count(key) > 0; }
    // scale.json's `key`; InputError "<who>: scale.json has no '<key>' (<why>)" when it is missing.
    double scale(const std::string& key, const std::string& who, const std::string& why) const;
};

// Typed arrays for the writer.
NdArray int8Array(const std::vector<std::int8_t>& v, std::vector<std::int64_t> shape);
NdArray int32Array(const std::vector<std::int32_t>& v, std::vector<std::int64_t> shape);
NdArray float32Array(const std::vector<float>& v, std::vector<std::int64_t> shape);
double ndValue(const NdArray& a, std::int64_t i);   // C-order element i as double

// Reads a params pickle (TTEParser's rule: a key not starting with 'v' gets a 'v' prefix).
// Errors name the file and the key.
QuantizedParams readParamsPickle(const std::string& path);
// dict[str → numpy.ndarray] in key order, written by our pickle writer (protocol 2).
std::string paramsPickleBytes(const QuantizedParams& p);
// {"<prefix>_x_scale": s, ...}; errors name the file and the key.
std::map<std::string, double> readScaleJson(const std::string& path);
std::string scaleJsonText(const std::map<std::string, double>& scales);

// Checks `p` against the parameters the graph uses: every parameter except input/label present
// with the graph's dtype and shape. Returns one message per problem ("v3_conv_1_bias: dtype int8,
// the graph needs int32"); empty when all match.
std::vector<std::string> paramsMismatches(const TrainingGraph& g, const QuantizedParams& p);

}  // namespace tinyscope
