#pragma once
// On-device fine-tuning, simulated (issue 20, docs/FINETUNING.md): a quantized model (a zoo model
// with its int8 params pickle, or a design-space subnet quantized by our PTQ), a new classifier
// for the task's classes, a sparse-update scheme, and tiny-training's recipe (SGD without weight
// decay or momentum, linear warm-up then cosine, lr given per batch 256, QAS on or off,
// random-resized-crop + colour jitter). Reports top-1 on held-out data after every epoch and the
// scheme's memory from the ledger. Runs resume from the last checkpoint in `out`. Torch-free
// interface (the CLI and the GUI call it; the GUI on a worker thread).
#include "JobControl.h"
#include "graph/MemoryLedger.h"
#include "io/JsonFile.h"
#include "nn/quantize/QuantizationJob.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

struct FineTuneRecipe {
    int epochs = 50;
    double warmup_epochs = 5;        // linear from 0; at most a tenth of the run (short runs)
    int batch = 64;
    double bs256_lr = 0.075;         // lr = bs256_lr · batch / 256 (tiny-training's QAS figure)
    bool qas = true;
    double head_scale = 1.0;         // the new classifier's output scale (0: the model's own; see replaceClassifier)
    int resolution = 0;              // 0: the model's input size (128 for the tiny-training models)
    double crop_scale_min = 0.08;    // random-resized-crop area fraction; 1 with jitter 0 = no augmentation
    double jitter = 0.4;             // colour jitter (brightness, contrast, saturation)
    bool flip = true;
    std::uint64_t seed = 0;
    std::size_t train_images = 0;    // 0: the whole training split; else its first n (after a seeded shuffle)
    std::size_t test_images = 0;     // 0: the whole test split; else its first n
    int threads = 2;
    bool evaluate_initial = true;    // top-1 of the new head before any step (short analysis runs skip it)

    Json toJson() const;
    static FineTuneRecipe fromJson(const JsonPath& j);
    double lrAt(std::int64_t iteration, std::int64_t itersPerEpoch) const;   // the schedule
};

struct FineTuneRequest {
    ModelSource model;
    QuantizeOptions quantize;        // a subnet is quantized on these (a params pickle is read as it is)
    // The scheme (loadScheme at the edge: a file, a published name such as "mcunet-5fps/49kb", or
    // a pattern) and its name for people and reports. Default: every bias.
    SparseScheme scheme = SparseScheme::biasOnly(-1);
    std::string scheme_name = "bias-only";
    std::string data = "fashion-mnist"; // Debian's Fashion-MNIST, or an image folder (class/*.png|jpg)
    FineTuneRecipe recipe;
    // Checkpoint folder ("" = none, not resumable). A run there resumes only a checkpoint of the
    // same run by content — the model's layers and int8 parameters, the scheme, the data items, the
    // recipe (not paths, not threads); another is refused, saying what differs.
    std::string out;
    // The model already prepared from `model` and `quantize` (many runs on one model: the
    // contribution analysis); null: fineTune prepares it.
    std::shared_ptr<const PreparedModel> prepared;
};

struct FineTuneEpoch {
    int epoch = 0;                   // 1-based
    double loss = 0;                 // mean training loss over the epoch
    double top1 = 0;                 // percent, on the test split
    double lr = 0;                   // at the epoch's last step
    double seconds = 0;              // training + evaluation of the epoch
};

struct FineTuneResult {
    std::string model, scheme, scheme_text, data;
    FineTuneRecipe recipe;
    int classes = 0;
    std::size_t train_images = 0, test_images = 0;
    double initial_top1 = 0;         // the new head before any step (chance level)
    std::vector<FineTuneEpoch> epochs;
    double final_top1 = 0;
    std::int64_t extra_bytes = 0, inference_peak_bytes = 0, total_bytes = 0, peak_bytes = 0;
    int updated_params = 0;          // parameter tensors the scheme updates
    std::int64_t updated_elements = 0;
    double seconds = 0;              // this invocation's wall time
    bool resumed = false;
    Json toJson() const;
};

// A training step done, for a live view: the running mean of the epoch's training loss so far.
struct FineTuneBatch {
    int epoch = 0;                   // 1-based: the epoch the step belongs to
    std::int64_t batch = 0;          // steps done in that epoch (1-based)
    std::int64_t batches = 0;        // steps per epoch
    double loss = 0;                 // mean training loss over the epoch's steps so far
    // Where it sits on an epoch axis (epoch 1's last step: 1.0).
    double position() const { return epoch - 1 + static_cast<double>(batch) / static_cast<double>(batches); }
};

// What a run reports while it runs, each on the calling (worker) thread right after it happened.
struct FineTuneProgress {
    std::function<void(double top1)> onInitial;          // top-1 before any step: measured, or read from the checkpoint
    std::function<void(const FineTuneBatch&)> onBatch;   // after every training step
    std::function<void(const FineTuneEpoch&)> onEpoch;   // after an epoch is evaluated (and checkpointed), before the next starts
};

FineTuneResult fineTune(const FineTuneRequest& request, const JobControl& job, const FineTuneProgress& progress);
// Only the epochs reported.
FineTuneResult fineTune(const FineTuneRequest& request, const JobControl& job = {},
                        const std::function<void(const FineTuneEpoch&)>& onEpoch = {});

// Whether `out` holds a fine-tuning checkpoint (a run there resumes).
bool hasFineTuneCheckpoint(const std::string& out);

// The memory of a scheme on a model without training (the table's memory columns, --budget).
struct SchemeMemory {
    std::string scheme_text;
    std::int64_t extra_bytes = 0, inference_peak_bytes = 0, total_bytes = 0, peak_bytes = 0;
};
SchemeMemory schemeMemory(const Network& net, const ResolvedScheme& scheme);

}  // namespace tinyscope
