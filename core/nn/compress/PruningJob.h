#pragma once
// Pruning of a design-space subnet — Lab 1 on the workbench's own networks (issue 50,
// docs/COMPRESSION.md) — as one call with a torch-free interface (the CLI's `tinyscope prune`).
// The subnet is extracted, BatchNorm re-calibrated and measured as runEvaluation does, then
// * fine-grained: the weights with more than one dimension (convs, SE, the classifier: the lab's
//   `param.dim() > 1`) pruned by magnitude (core/compress/Pruning.h) on the raw conv weights, or
// * channel: every channel group narrowed (nn/compress/ChannelPruning.h), with and without sorting
//   the channels by importance first, and the original's and the pruned network's MACs,
//   parameters, peak activation memory and latency measured in the same run;
// BatchNorm folded afterwards and top-1 measured on the same images (oneDNN by default), then
// optionally fine-tuned (masks re-applied after every step).
#include "JobControl.h"
#include "compress/Pruning.h"
#include "compress/WeightHistogram.h"
#include "io/JsonFile.h"
#include "nn/accuracy/EvaluationJob.h"
#include "nn/compress/SubnetFineTune.h"
#include "nn/measure/SubnetLatency.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tinyscope {

struct PruneRequest {
    EvaluationRequest evaluation;              // the subnet, its data, BN re-calibration, engine, threads
    std::map<std::string, double> sparsity;    // per layer, by the lab's key name; others: `uniform`
    double uniform = 0;                        // every layer not named above (0: dense)
    bool sensitivity = false;                  // the lab's scan: each layer alone at each `scan` sparsity
    std::vector<double> scan{0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
    // With the scan: the sparsity per layer chosen from its curves (compress/SparsityChoice.h) so
    // that the non-zeros are at most this fraction of every parameter (get_model_size); 0: none.
    // Refused, naming the smallest fraction the scan's sparsities reach, when they cannot.
    double target_size = 0;
    // Channel pruning instead: every group at `channels` (< 0: no channel pruning) unless named in
    // `channel_ratios`; `sort`: the network kept (measured, fine-tuned, written) is the one sorted by
    // importance first (both are measured).
    double channels = -1;
    std::map<std::string, double> channel_ratios;
    bool sort = false;
    int latency_runs = 50;
    // Fine-tuning after pruning, the masks re-applied after every step (the lab's
    // FineGrainedPruner.apply callback); epochs 0: none. On `finetune_data`, "" the space's own
    // training data (workspace/CalibrationData.h openTrainingData).
    SubnetFineTuneOptions finetune;
    std::string finetune_data;
    std::string out;                           // folder for subnet.pth (the lab's keys), subnet.json, space.json, pruning.json; "": none

    bool channelPruning() const { return channels >= 0 || !channel_ratios.empty(); }
};

struct PrunedLayer {
    std::string name;                          // "blocks.3.mobile_inverted_conv.depth_conv.conv.weight"
    std::vector<std::int64_t> shape;
    std::int64_t params = 0, nonzero = 0;
    double sparsity = 0;                       // asked
};

struct SensitivityCurve {
    std::string layer;
    std::int64_t params = 0;
    std::vector<double> sparsity, top1;        // top-1 (percent) with this layer alone pruned
};

// What a network costs: the cost model's counts and the measured latency of one image.
struct NetworkCost {
    std::int64_t macs = 0, params = 0, peak_bytes = 0;
    Latency latency;
    Json toJson() const;
};

struct PruneResult {
    std::string data;
    std::size_t images = 0;
    double dense_top1 = 0, pruned_top1 = 0;    // percent (channel pruning: of the network kept)
    bool pruned = false;                       // some layer asked for a sparsity (or a group for a ratio) above 0
    std::vector<PrunedLayer> layers;           // every prunable layer, in forward order
    // get_model_size with 32-bit data: every parameter (BatchNorm's and biases too), and the
    // non-zero ones only (count_nonzero_only=True), in bits.
    std::int64_t dense_bits = 0, sparse_bits = 0;
    std::vector<SensitivityCurve> sensitivity;
    // The scan was cancelled: `sensitivity` holds the layers finished before, nothing was pruned,
    // fine-tuned or written (Ctrl-C keeps what is done).
    bool scan_cancelled = false;
    std::size_t scan_layers = 0;               // layers the scan was to measure
    double scan_seconds = 0;                   // the scan loop alone (measurements and pruning), wall time
    double target_size = 0, choice_drop = 0;   // the target and the accuracy budget the choice used (points)
    // Every prunable weight before pruning, and the non-zero ones after (fine-tuning), 64 bins.
    WeightHistogram weights_before, weights_after;
    // Channel pruning: the groups, top-1 without and with sorting, the costs before and after.
    std::vector<ChannelGroup> channel_groups;
    bool sorted = false;                       // the network kept was sorted first
    double unsorted_top1 = 0, sorted_top1 = 0;
    // The network kept, measured once more after re-calibrating its BatchNorm on the request's
    // calibration images (what quantize / deploy --subnet do by default); the network kept, written
    // and fine-tuned keeps the statistics it had (the lab's). < 0: not measured (no re-calibration asked).
    double recalibrated_top1 = -1;
    NetworkCost original, narrowed;
    std::string finetune_data;                 // the training data's source ("" without fine-tuning)
    std::vector<SubnetFineTuneEpoch> finetune; // per epoch: loss, lr, top-1 on the evaluation images
    double finetuned_top1 = 0;                 // after the last epoch (the weights written by --out)
    double seconds = 0;
    Json toJson() const;
};

// The prunable layers of the request's subnet (loads the supernet): names, shapes, parameters.
std::vector<PrunedLayer> prunableLayers(const EvaluationRequest& request);
// Its channel groups (loads the supernet): names and widths.
std::vector<ChannelGroup> prunableChannelGroups(const EvaluationRequest& request);
// Refuses a sparsity or ratio outside [0, 1], a layer or group that does not exist (naming the
// ones that do), a ratio leaving a group no channel, before any measurement; nothing is written
// when cancelled. A cancelled sensitivity scan returns the layers it finished (scan_cancelled);
// any other cancel throws CancelledError.
PruneResult runPruning(const PruneRequest& request, const JobControl& job = {});

}  // namespace tinyscope
