#pragma once
// n-bit weight quantization of a design-space subnet — Lab 2 on the workbench's own networks
// (issue 50, docs/COMPRESSION.md "n-bit weights") — with a torch-free interface (the CLI's
// `tinyscope quantize --bits`). The subnet is extracted, BatchNorm re-calibrated and measured as
// runEvaluation does; then, for each method and bit width, every weight with more than one
// dimension (the labs' `param.dim() > 1`) is replaced by its quantized values — linear: per output
// channel, symmetric (core/compress/LinearQuantization.h); k-means: 2^n centroids per tensor
// (core/compress/KMeansQuantization.h) — and top-1 measured with float arithmetic on them, before
// and optionally after quantization-aware training. The int8 deployment path (`tinyscope
// quantize` without --bits) is a different thing and is unchanged.
#include "JobControl.h"
#include "compress/WeightHistogram.h"
#include "io/JsonFile.h"
#include "nn/accuracy/EvaluationJob.h"
#include "nn/compress/SubnetFineTune.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

enum class WeightQuantMethod { Linear, KMeans };
const char* methodName(WeightQuantMethod m);   // "linear", "kmeans"

struct WeightQuantRequest {
    EvaluationRequest evaluation;
    std::vector<int> bits{8, 4, 2};
    std::vector<WeightQuantMethod> methods{WeightQuantMethod::Linear, WeightQuantMethod::KMeans};
    std::uint64_t kmeans_seed = 0;
    // Quantization-aware training after each quantization (epochs 0: none): k-means as the lab's
    // update_codebook (each centroid the mean of its cluster's float weights after every step, the
    // labels kept); linear with float shadow weights re-quantized after every step (the
    // straight-through estimator). The lab's QAT optimizer has no weight decay: the default here.
    SubnetFineTuneOptions qat = [] {
        SubnetFineTuneOptions o;
        o.weight_decay = 0;
        return o;
    }();
    std::string qat_data;                 // "" the space's own training data
};

struct QuantizedWeight {
    std::string name;
    std::vector<std::int64_t> shape;
    std::int64_t params = 0;
    std::int64_t distinct_values = 0;     // in the tensor (k-means: at most 2^n; linear: at most 2^n per output channel)
    std::int64_t max_channel_values = 0;  // the most distinct values of one output channel
};

struct WeightQuantRun {
    WeightQuantMethod method = WeightQuantMethod::Linear;
    int bits = 8;
    double top1 = 0;                      // before QAT (percent)
    std::vector<SubnetFineTuneEpoch> qat; // per epoch
    double qat_top1 = 0;                  // after the last epoch
    // Sizes in bits. The lab's get_model_size(model, bits): every parameter × bits. Ours beside it:
    // the quantized weights × bits, every other parameter at 32 bits, and the codebooks' (k-means)
    // or the per-channel scales' (linear) float32s.
    std::int64_t lab_size_bits = 0, weight_bits = 0, other_bits = 0, overhead_bits = 0;
    std::vector<QuantizedWeight> tensors;     // after QAT when there was some
    WeightHistogram histogram;                // every quantized weight's value, 128 bins
    // The largest tensor, for the k-means view: its float weights (every k-th, at most 4,096) and
    // the cluster of each (k-means; linear: the level, q + 2^(n−1), of its channel), the centroids.
    std::string sample_tensor;
    std::vector<float> sample_values, centroids;
    std::vector<int> sample_labels;
};

struct WeightQuantResult {
    std::string data, train_data;
    std::size_t images = 0;
    double float_top1 = 0;
    std::int64_t params = 0, float_bits = 0;   // every parameter at 32 bits
    std::vector<WeightQuantRun> runs;          // method-major, bits in the order asked
    double seconds = 0;
    Json toJson() const;
};

// Refuses a bit width outside 1–8 before any work; a cancelled run returns nothing.
WeightQuantResult runWeightQuantization(const WeightQuantRequest& request, const JobControl& job = {});

}  // namespace tinyscope
