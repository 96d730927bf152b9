#pragma once
// Builds an accuracy dataset in the lab's format: sampled subnets measured on holdout images,
// written as "<name>_acc_table.json" = [[config, top1_percent], ...]. Deterministic for a seed,
// resumable (a sidecar file remembers what is done), parallel over worker threads, and shardable
// (--shard i/N takes every N-th sample from i), so many machines can build one dataset.
#include "nn/measure/Evaluator.h"

#include <string>

namespace tinyscope {

struct AccuracyTableOptions {
    std::size_t count = 2000;           // samples of the whole dataset (all shards together)
    std::uint64_t seed = 0;             // sample i is draw i of ArchSampler::random with PyRandom(seed)
    int shard = 0, shards = 1;
    int workers = 2;                    // subnets measured in parallel (one LibTorch thread each)
    std::string eval_data = "fashion-mnist:holdout";
    int eval_split = 1;                 // lab split of eval_data measured (odd items), -1 for all
    int calib_split = 0;                // lab split of eval_data used for BN re-calibration
    std::size_t calib_images = 500;
    int batch = 250;
    // Which engine measures (not part of the resume check: both give the same top-1 up to ties
    // within 1e-4 of the logits, docs/ONEDNN.md).
    EvalEngine engine = EvalEngine::OneDnn;
    // bf16: oneDNN's bf16 plans measure (AVX-512 BF16 or AMX; docs/ONEDNN.md); part of the resume check.
    EvalDtype dtype = EvalDtype::Fp32;
    // int8: the deployed top-1 instead (nn/quantize/Int8Measurement: our PTQ on int8_calib_images
    // images of the calibration split, then Int8Forward's exact arithmetic); part of the resume check.
    bool int8 = false;
    std::size_t int8_calib_images = 200;
};

struct AccuracyTableProgress {
    std::size_t done = 0, total = 0;    // of this shard
    std::size_t resumed = 0;            // of `done`, measured by an earlier run of the same shard
    double last_top1 = 0;
    double seconds = 0;                 // of this run

    double etaSeconds() const
    {
        const std::size_t now = done - resumed;
        return now ? seconds / static_cast<double>(now) * static_cast<double>(total - done) : 0;
    }
};

// Writes `path` (atomically, every few subnets) and `path + ".state.json"`; if both exist and the
// options match, continues where they stopped. Returns the number of pairs in the file.
std::size_t buildAccuracyTable(const Supernet& supernet, const AccuracyTableOptions& options, const std::string& path,
                               const JobControl& job, const std::function<void(const AccuracyTableProgress&)>& onProgress);

// The configs of a shard, in order (shared by the builder and its tests).
std::vector<std::pair<std::size_t, SubnetConfig>> accuracyTableSamples(const DesignSpace& space, const AccuracyTableOptions& options);

}  // namespace tinyscope
