#pragma once
// Float fine-tuning of one extracted subnet — the compression labs' loop (Lab 1 after pruning,
// Lab 2's k-means quantization-aware training) on the workbench's own networks (issue 50,
// docs/COMPRESSION.md "Fine-tuning"): the lab's SGD (lr 0.01, momentum 0.9, weight decay 1e-4 on
// every parameter, PyTorch's momentum form), plain cross-entropy, BatchNorm in training mode
// (running statistics updated with momentum 0.1, as model.train()), random crop with zero padding
// and a horizontal flip (data/Augment.h PadCropFlip). After every optimizer step `afterStep` runs:
// the pruner re-applies its masks there, k-means QAT updates its codebooks. Includes LibTorch types.
#include "JobControl.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tinyscope {

class ImageDataset;
class Subnet;

// The learning-rate schedule. Cosine: from lr to 0 over the whole run, one value per batch. Lab:
// the labs' CosineAnnealingLR(T_max = epochs) stepped after every batch, i.e. lr·(1 + cos(π·t /
// epochs))/2 at batch t — a cosine with a period of 2·epochs batches, not one over the run (kept
// to reproduce the notebooks; docs/COMPRESSION.md).
enum class LrSchedule { Cosine, Lab };

struct SubnetFineTuneOptions {
    int epochs = 0;
    double lr = 0.01;
    double momentum = 0.9;
    double weight_decay = 1e-4;
    int batch = 64;
    std::size_t images = 0;           // per epoch: a seeded shuffle's first N (0: every item)
    LrSchedule schedule = LrSchedule::Cosine;
    int pad = 2;                      // random crop padding (source pixels); 0 and flip false: no augmentation
    bool flip = true;
    std::uint64_t seed = 0;

    // Batches of a run on `trainImages` images.
    std::size_t steps(std::size_t trainImages) const;
    // The rate of batch `step` (0-based) of a run of `steps` batches.
    double lrAt(std::size_t step, std::size_t steps) const;
    // InputError naming the option when a value is out of range.
    void check() const;
};

struct SubnetFineTuneEpoch {
    int epoch = 0;                    // 1-based
    double loss = 0;                  // mean over the epoch's batches
    double lr = 0;                    // at its last batch
    double top1 = 0;                  // `evaluate` after the epoch (percent)
    double seconds = 0;
};

// Trains `sub` in place (BatchNorm unfolded first; left unfolded) on `train` at the subnet's
// resolution. `evaluate` measures top-1 after each epoch (it may fold BatchNorm; training unfolds
// again). `progress(done, total, stage)` per batch. Throws CancelledError when cancelled (the
// subnet is then half-trained: callers discard it).
std::vector<SubnetFineTuneEpoch> fineTuneSubnet(Subnet& sub, const ImageDataset& train, const SubnetFineTuneOptions& options,
                                                const std::function<void()>& afterStep, const std::function<double()>& evaluate,
                                                const JobControl& job = {});

}  // namespace tinyscope
