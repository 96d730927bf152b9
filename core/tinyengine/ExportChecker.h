#pragma once
// What TinyEngine's code generator and kernel library accept (TINYENGINE_JSON_SPEC.md §9),
// checked on a training graph before it is written (or after it is read): kernel coverage of the
// forward convs, weight and input gradients; the stem not trainable; batch 1; ops outside the
// vocabulary (squeeze-excite's nn.mcumultiply, the autoencoder's MSE loss); the §5.4 idioms the
// parser pattern-matches; parameter naming the parser matches on substrings; params and scales
// present. Torch-free.
#include "graph/TrainingGraph.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <string>
#include <vector>

namespace tinyscope {

enum class FindingSeverity { Error, Warning };

struct Finding {
    FindingSeverity severity = FindingSeverity::Error;
    std::string rule;      // short id, e.g. "weight-gradient-kernel"
    std::string spec;      // spec section, e.g. "§9.7"
    std::string where;     // "op 296 (v11_conv_0_weight)", "conv 3 (blocks.1.dw)", "scale.json"
    std::string message;

    bool error() const { return severity == FindingSeverity::Error; }
    std::string text() const;   // "error §9.7 weight-gradient-kernel: conv 3 (blocks.1.dw): ..."
    Json toJson() const;
};

// `net` is the network the graph was lowered from (or recovered from it); `params` may be null
// (then params and scales are not checked).
std::vector<Finding> checkForTinyEngine(const TrainingGraph& g, const Network& net, const QuantizedParams* params);

int errorCount(const std::vector<Finding>& findings);

}  // namespace tinyscope
