#pragma once
// Once-for-all supernet training in LibTorch: the largest network first, then progressive
// shrinking over kernel size, depth, expand ratio and width; every step follows the sandwich rule
// (largest, smallest and random subnets) with in-place distillation from the largest, or from a
// frozen teacher whose predictions can be cached (TeacherLogitCache). SGD with
// Nesterov momentum, cosine learning rate per phase, label smoothing, random crop with padding
// and horizontal flip. Deterministic for a seed; checkpoints in the real supernet format and
// resumes exactly where the last checkpoint left off. See docs/SUPERNET_TRAINING.md.
#include "io/JsonFile.h"
#include "nn/measure/Evaluator.h"
#include "space/DesignSpace.h"

#include <functional>
#include <string>
#include <vector>

namespace tinyscope {

class DistributedContext;

struct TrainPhase {
    std::string name;
    int epochs = 1;
    double lr = 0.05;                 // peak learning rate of the phase's cosine schedule
    std::vector<int> ks, expand, depth, widths;   // choices sampled in this phase (empty: all of the space)
    int random_subnets = 2;           // sandwich: largest + smallest + this many random (-1: largest only)
    std::size_t images_per_epoch = 0; // 0: the recipe's images_per_epoch
};

struct TrainRecipe {
    std::string data = "fashion-mnist:fit";
    std::size_t images_per_epoch = 0; // 0: the whole training set each epoch
    int batch = 64;
    double momentum = 0.9;
    double weight_decay = 4e-5;       // conv and linear weights only
    double label_smoothing = 0.1;
    double child_label_weight = 0.0;  // children's loss: (1-w)·distillation + w·label cross-entropy
    int warmup_steps = 100;           // linear warm-up at the start of the first phase
    int pad = 2;                      // random crop with this much zero padding (source pixels)
    bool flip = true;
    std::uint64_t seed = 0;
    int threads = 2;
    int checkpoint_every = 200;       // steps between mid-epoch checkpoints
    std::size_t monitor_images = 1000;   // holdout images for the end-of-epoch check (0: none)
    std::string monitor_data = "fashion-mnist:holdout";
    std::string init_from;            // start from this supernet's weights (e.g. a finished run) instead of a fresh init
    // Frozen teacher: the largest subnet of `init_from` (BN re-calibrated on the holdout, eval
    // mode) instead of in-place distillation; every subnet of a step, the largest included, then
    // learns (1 - child_label_weight) from it and child_label_weight from the labels.
    bool frozen_teacher = false;
    int augment_draws = 0;            // 0: a fresh crop / flip every epoch; A: epoch e repeats draw e mod A
    int teacher_cache_top_k = 0;      // frozen teacher: 0 runs it in every step; k caches its top-k per (draw, image) once
    std::vector<TrainPhase> phases;

    static TrainRecipe preset(const std::string& name);
    static const std::vector<std::string>& presetNames();   // demo, demo-finetune, demo2, demo3-teacher, demo3, demo4-teacher, demo4, transfer-teacher, transfer, tiny
    static TrainRecipe fromJson(const Json& j, const std::string& source);
    Json toJson() const;
};

struct TrainStatus {
    std::string phase;
    int phase_index = 0, phases = 0;
    int epoch = 0, epochs = 0;                 // within the phase
    std::size_t step = 0, steps_per_epoch = 0; // within the epoch
    std::size_t global_step = 0, total_steps = 0;
    std::size_t completed_steps = 0;           // steps done (what a checkpoint holds)
    double loss = 0, lr = 0;
    double images_per_second = 0;
    double elapsed_seconds = 0;                // including earlier sessions
    double cpu_seconds = 0;                    // process CPU time, including earlier sessions
    double eta_seconds = 0;
    std::string event;                         // "initialised", "step", "checkpoint", "epoch", "resumed", "done"
    std::string note;                          // "initialised": what --init-from took (WeightTransfer::summary)
    Json monitor;                              // end-of-epoch top-1 of largest / smallest on holdout
};

class SupernetTrainer {
public:
    // `outDir` holds supernet.pth (real format), optimizer.pth and train_state.json. If a state
    // file is there, training resumes from it (the recipe must match).
    SupernetTrainer(const DesignSpace& space, TrainRecipe recipe, std::string outDir);

    // Runs to the end (or `maxSteps` more steps, for tests). Returns true when training finished.
    bool run(const JobControl& job, const std::function<void(const TrainStatus&)>& onStatus, std::size_t maxSteps = 0);

    const TrainRecipe& recipe() const { return recipe_; }

    // Data-parallel training (DistributedContext.h): the recipe's batch is the global batch, this
    // rank trains on its shard of every batch, starts from rank 0's state, averages its gradients
    // with the others' after the backward passes, and only rank 0 writes checkpoints and monitors.
    // `syncBatchNorm`: batch norm over the global batch (N ranks train as one process with N times
    // the batch); false: each rank's own shard, as PyTorch DDP without SyncBatchNorm (fewer
    // collectives, statistics of B/N images).
    void setDistributed(DistributedContext* context, bool syncBatchNorm = true)
    {
        dist_ = context;
        syncBn_ = syncBatchNorm;
    }

private:
    DesignSpace space_;
    TrainRecipe recipe_;
    std::string out_;
    DistributedContext* dist_ = nullptr;
    bool syncBn_ = true;
};

}  // namespace tinyscope
