#pragma once
// Runs a compiled training graph in the interpreter and compares every parameter gradient it
// outputs with LibTorch autograd on the same fake-quantized model (with the reference
// compiler's quirks when the graph was built in reference mode). Partial-channel gradients are
// compared with the matching channels of autograd's full gradient. Torch-free header.
#include "graph/GraphInterpreter.h"
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "zoo/Network.h"

#include <string>
#include <vector>

namespace tinyscope {

struct GradientComparison {
    std::string name;
    double relative_error = 0;   // max |got − want| / max |want|
    double scale = 0;            // max |want|
};

struct GradientCheckResult {
    double loss = 0, reference_loss = 0;
    std::vector<GradientComparison> gradients;
    double maxRelativeError() const;
    int allZero() const;          // gradients that are zero everywhere (a vacuous comparison)
};

GradientCheckResult checkGradients(const TrainingGraph& g, const Network& net, const ResolvedScheme& scheme,
                                   const ParameterStore& params);

}  // namespace tinyscope
