#pragma once
// One training step of an exported TinyEngine graph, computed by the workbench the way the code
// TinyEngine generates from it should compute it (docs/DEVICE_RUNNER.md "The training step on the
// workbench"): the int8 forward in TinyEngine's arithmetic (Int8Forward), the graph's loss and float
// backward run by GraphInterpreter on those forward values, then TinyEngine's SGD update with QAS:
//   int32 bias   b ← b − (int32)(g · blr · QAS_b[o]),   QAS_b = 1 / (s_eff·s_y)²
//   int8 weight  w ← wrap8((int32)((float)w − g · QAS_w[o] · lr)),   QAS_w = 1 / (s_eff·s_y/s_x)²
// with float32 factors as TinyEngine's code generator computes them from the params pickle and
// scale.json (QAS_util.get_QAS), lr = 0.0008 and blr = 0.0004 (TinyEngine/include/genNN.h),
// truncation toward zero and, for int8 weights, wrap-around modulo 256 (the generated code stores
// the float through a 32-bit conversion and a byte store, without saturation). A partial-channel
// weight gradient ([O, k, KH, KW] for a weight [O, I, KH, KW]) updates the first k input channels.
// Torch-free, Qt-free.
#include "graph/TrainingGraph.h"
#include "tinyengine/QuantizedParams.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

constexpr float kTinyEngineLr = 0.0008f;    // weights (TinyEngine/include/genNN.h: static float lr)
constexpr float kTinyEngineBlr = 0.0004f;   // biases (static float blr)

// What the step did to one parameter, in the layout the generated code stores it: a bias as [O];
// a weight as OHWI over the first `channels` input channels (TinyEngine's in-SRAM copy).
struct ParameterStep {
    std::string name;                         // "v9_conv_0_weight"
    DType dtype = DType::Int32;               // Int8 (weights) or Int32 (biases)
    int channels = 0;                         // weights: input channels updated (k); biases: 0
    std::vector<std::int64_t> before, after;  // device layout
    std::vector<float> gradient;              // the graph's gradient (device layout)
    std::vector<float> qas;                   // the QAS factor per element's output channel (1 / QAS, as generated)
    std::int64_t wrapped = 0;                 // int8 elements whose update left [-128, 127] (stored modulo 256)
    // Per element, the outcomes a float32 gradient within kGradientTolerance (relative) of the workbench's
    // gives: the stored value for an update u·(1 ± tolerance), before the int8 store's wrap-around
    // (int32 biases: the new bias; int8 weights: the 32-bit conversion). Equal to `after` unless the
    // truncation sits that close to an integer.
    std::vector<std::int64_t> low, high;

    // Is `value` (as the device stores it) an outcome of a gradient within the tolerance?
    bool allows(std::size_t i, std::int64_t value) const;
};

// The relative float32 tolerance of a gradient computed in another order (the 1e-5): the
// device sums in another order and fuses multiply-adds under -Ofast.
constexpr double kGradientTolerance = 1e-5;

struct TrainingStepResult {
    std::vector<ParameterStep> params;        // the graph's bias / weight gradient outputs, in output order
    std::vector<std::int8_t> logits;          // the forward's int8 logits of the step
    double loss = 0;
};

// Writes a parameter given in the layout of ParameterStep (a bias [O]; a weight OHWI over its first
// `channels` input channels) into `params` (OIHW), e.g. the device's values after a step.
void setStepLayoutValues(const TrainingGraph& g, QuantizedParams& params, const std::string& name, int channels,
                         const std::vector<std::int64_t>& values);

// One step on `image` (NCHW int8, the graph's input) with class `label`; updates `params` in place
// (so a second call runs the next step). Throws InputError when the graph or the params lack what the
// rule needs (names the parameter and the missing key).
TrainingStepResult tinyEngineTrainingStep(const TrainingGraph& g, QuantizedParams& params, const std::vector<std::int8_t>& image,
                                          int label);

// What TinyEngine's code generator puts into `offsetRBias` of a depthwise conv's bias before any
// training (CodeGenerator._parseoffsetBias): the input offset folds into the bias as
// f = bias + Σ_k w·(−z_x), the forward's `offsetBias` holds clip32(f) and `offsetRBias` the rest,
// f − clip32(f): non-zero only where the fold leaves the int32 range (dead channels). The training
// step adds its updates to `offsetRBias`. Throws InputError when `bias` is not the bias of a conv.
std::vector<std::int64_t> tinyEngineBiasFoldResidual(const TrainingGraph& g, const QuantizedParams& params, const std::string& bias);

}  // namespace tinyscope
