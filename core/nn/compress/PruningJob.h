#pragma once
// Fine-grained pruning of a design-space subnet — Lab 1 on the workbench's own networks (issue 50,
// docs/COMPRESSION.md) — as one call with a torch-free interface (the CLI's `tinyscope prune`).
// The subnet is extracted, BatchNorm re-calibrated and measured as runEvaluation does; the weights
// with more than one dimension (convs, SE, the classifier: the lab's `param.dim() > 1`) are pruned
// by magnitude (core/compress/Pruning.h) on the raw conv weights, BatchNorm folded afterwards, and
// top-1 measured on the same images (oneDNN by default).
#include "JobControl.h"
#include "io/JsonFile.h"
#include "nn/accuracy/EvaluationJob.h"

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
    std::string out;                           // folder for subnet.pth (the lab's keys) and subnet.json; "": none
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

struct PruneResult {
    std::string data;
    std::size_t images = 0;
    double dense_top1 = 0, pruned_top1 = 0;    // percent
    bool pruned = false;                       // some layer asked for a sparsity above 0
    std::vector<PrunedLayer> layers;           // every prunable layer, in forward order
    // get_model_size with 32-bit data: every parameter (BatchNorm's and biases too), and the
    // non-zero ones only (count_nonzero_only=True), in bits.
    std::int64_t dense_bits = 0, sparse_bits = 0;
    std::vector<SensitivityCurve> sensitivity;
    double seconds = 0;
    Json toJson() const;
};

// The prunable layers of the request's subnet (loads the supernet): names, shapes, parameters.
std::vector<PrunedLayer> prunableLayers(const EvaluationRequest& request);
// Refuses a sparsity outside [0, 1] or a layer that does not exist (naming the ones that do)
// before any measurement; nothing is written when cancelled.
PruneResult runPruning(const PruneRequest& request, const JobControl& job = {});

}  // namespace tinyscope
