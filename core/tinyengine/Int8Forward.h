#pragma once
// The int8 forward of a quantized network in plain C++: the forward ops of a training graph
// (nn.mcuconv2d with int32 accumulation then float requantisation, nn.mcutruncate, nn.mcuadd,
// nn.mcumultiply, mcumean) on int8 tensors, in one of two arithmetics:
//  * Exact (default): the graph's semantics as the interpreter and the fake-quantized model
//    compute them: exact accumulation, rounding half to even (LibTorch's round);
//  * TinyEngine: what TinyEngine's float-requantisation kernels (-FR) compute on the device
//    (docs/DEVICE_RUNNER.md): conv sums in int32 with wrap-around, (int32)((float)acc · scale)
//    truncated toward zero (saturating, as the Cortex-M's VCVT), add with C's round (half away
//    from zero) after adding z_y, average pooling (sum ± ⌊HW/2⌋) / HW in integer division;
//  * Tflite: what TensorFlow Lite Micro's reference int8 kernels compute on the exported
//    TFLite file (deploy/TfliteExport.h, tinyengine/TfliteArithmetic.h): int32 fixed-point
//    multipliers from QuantizeMultiplier of each conv channel's effective scale (pass the
//    file's, TfliteModel::effective_scales, to be exact; else s_eff), gemmlowp's rounding;
//    ADD with left_shift 20 and per-input multipliers; MUL with one multiplier; average
//    pooling rounding half away from zero.
// Torch-free; thread-safe (const) once built.
#include "JobControl.h"
#include "data/ImageDataset.h"
#include "graph/TrainingGraph.h"
#include "tinyengine/QuantizedParams.h"
#include "tinyengine/TfliteArithmetic.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

enum class Int8Arithmetic { Exact, TinyEngine, Tflite };
const char* int8ArithmeticName(Int8Arithmetic a);   // "exact", "tinyengine", "tflite"

// One conv of the int8 forward, as its accumulation sees it: input C×H×W (CHW int32 values), weights
// O×C/groups×KH×KW, strides, padding top/left/bottom/right, the input zero point.
struct Int8ConvShape {
    int C = 0, H = 0, W = 0, O = 0, HO = 0, WO = 0, KH = 1, KW = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, groups = 1;
    std::int32_t zx = 0;
    const std::vector<std::int32_t>* weight = nullptr;
};

// The heavy part of a conv, replaceable by a faster engine (nn/onednn's OneDnnInt8Accumulator):
// acc[o·HO·WO + i] = Σ w · (x − zx) over the input zero-padded after the shift, without the bias —
// exactly what Int8Forward's own loops compute. The requantisation stays Int8Forward's, so every
// arithmetic is unchanged. Returns false to leave a conv (or one call) to the loops. Must be safe
// to call from several threads at once.
class Int8ConvAccumulator {
public:
    virtual ~Int8ConvAccumulator() = default;
    virtual bool accumulate(std::size_t conv, const std::int32_t* x, std::int32_t* acc) const = 0;
};

// One op of the int8 forward as Int8Forward runs it (tensor ids are the graph's; `in` / `out`
// index the value slots of runAll). Exposed for other engines of the same semantics
// (nn/onednn/OneDnnInt8Plan.h), which compute every element with tinyengine/Int8Kernels.h.
struct Int8Step {
    OpKind kind;
    int out;                       // value slot (tensor id)
    std::vector<int> in;           // value slots of the activation inputs
    // conv
    int C = 0, H = 0, W = 0, O = 0, HO = 0, WO = 0, KH = 1, KW = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, groups = 1;
    std::vector<std::int32_t> weight, bias;
    std::vector<float> scale;
    std::int32_t zx = 0, zy = 0;
    // add / multiply
    float z1 = 0, z2 = 0, s1 = 0, s2 = 0, sy = 1, fzy = 0;
    std::int64_t n = 0;            // output elements
    std::vector<int> shape1, shape2, outShape;   // broadcast (multiply gate)
    // Tflite arithmetic
    std::vector<QuantizedMultiplier> mult;       // conv: per channel; multiply: one
    std::shared_ptr<const TfliteAdd> add;
    std::size_t conv = 0;          // index among the convs
};

class Int8Forward {
public:
    // Checks that `params` has every forward parameter with the graph's shape; the input scale
    // is the stem's `<prefix>_x_scale` from scale.json. Throws InputError naming what is missing.
    // `effectiveScales` (Tflite only): per conv scale parameter ("<prefix>_scale") the effective
    // scale TFLite derives from the file's float32 tensor scales; convs not in it use s_eff.
    Int8Forward(const TrainingGraph& g, const QuantizedParams& params, Int8Arithmetic arithmetic = Int8Arithmetic::Exact,
                const std::map<std::string, std::vector<double>>* effectiveScales = nullptr);

    int classes() const { return classes_; }
    int logitsTensor() const { return logits_; }   // the tensor of runAll's result that run() returns
    double inputScale() const { return in_scale_; }
    int inputZero() const { return in_zero_; }

    // Quantizes a normalised CHW float image: clamp(round(x / s_x) + z_x).
    std::vector<std::int8_t> quantizeInput(const float* chw) const;
    // The classifier's int8 output (the logits before the loss).
    std::vector<std::int8_t> run(const std::vector<std::int8_t>& input) const;
    // Every forward op's output (int8/int32 values as int32), for comparisons with the interpreter.
    std::vector<std::vector<std::int32_t>> runAll(const std::vector<std::int8_t>& input) const;
    int predict(const float* chw) const;   // argmax of the int8 logits (first of ties)

    // The convs in forward order (the `conv` index of Int8ConvAccumulator), and the accumulator to
    // use (null: the loops). Set it before running; the shapes point into this object.
    std::vector<Int8ConvShape> convShapes() const;
    void setConvAccumulator(std::shared_ptr<const Int8ConvAccumulator> accumulator) { accumulator_ = std::move(accumulator); }

    const std::vector<Int8Step>& steps() const { return steps_; }
    Int8Arithmetic arithmetic() const { return arith_; }
    int inputTensor() const { return input_; }
    const TrainingGraph& graph() const { return g_; }

private:
    const TrainingGraph& g_;
    std::vector<Int8Step> steps_;
    Int8Arithmetic arith_ = Int8Arithmetic::Exact;
    int input_ = -1, logits_ = -1, classes_ = 0;
    double in_scale_ = 1.0;
    int in_zero_ = 0;
    std::shared_ptr<const Int8ConvAccumulator> accumulator_;

    void execute(const Int8Step& s, std::vector<std::vector<std::int32_t>>& v) const;
};

struct Int8Top1 {
    std::size_t images = 0, correct = 0, skipped = 0;
    double top1 = 0, seconds = 0;
    int classes = 0;                      // the dataset's
    std::vector<std::size_t> confusion;   // [true · classes + predicted]
};

// Top-1 of `predict` (normalised NCHW images, their count, the classes it writes) on `items` of
// `data` at `resolution`, decoded in batches of 100 with `threads` workers, cancellable through `job`.
Int8Top1 evaluateInt8Batches(const ImageDataset& data, const std::vector<std::size_t>& items, int resolution, const Normalization& norm,
                             int threads, const JobControl& job, const std::function<void(const float*, std::size_t, int*)>& predict);

// Top-1 of the int8 forward on `items` of `data` at `resolution` (images normalised with `norm`,
// decoded in batches of 100; `threads` workers run the forward).
Int8Top1 evaluateInt8(const Int8Forward& f, const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                      const Normalization& norm = {}, int threads = 2, const JobControl& job = {});

}  // namespace tinyscope
