#pragma once
// LibTorch autograd on the fake-quantized model a training graph's forward describes: the
// int8 ops evaluated in float32 with rounding as a straight-through estimator (tiny-training's
// QuantizedConv2dDiff semantics), the clamp's gradient masked, the loss as in the graph. This
// is the reference the compiled backward graph is checked against (tests/test_autodiff.cpp).
// Torch-free header: callers need not include torch.
#include "graph/GraphInterpreter.h"
#include "graph/TrainingGraph.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

struct AutogradResult {
    double loss = 0.0;
    std::map<std::string, std::vector<float>> gradients;   // d loss / d every weight and bias, by name
    std::vector<std::vector<float>> forward;               // output values of ops [0, forward_ops)
};

enum class FakeQuantSemantics {
    Exact,        // the model as defined
    Reference,    // MIT compiler's quirks: the graph's dropped gradient contributions are detached
                  // and the weight gradient sees the raw int8 input (zero point ignored)
};

AutogradResult fakeQuantAutograd(const TrainingGraph& g, const ParameterStore& params,
                                 FakeQuantSemantics semantics = FakeQuantSemantics::Exact);

}  // namespace tinyscope
