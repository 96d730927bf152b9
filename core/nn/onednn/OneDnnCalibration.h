#pragma once
// Once-for-all BN re-calibration (set_running_statistics) on oneDNN primitives: the subnet's forward
// with every BatchNorm in batch-statistics mode — each conv (its own weights, no bias) followed by
// oneDNN's training-mode batch normalisation, which normalises with the batch's mean and biased
// variance and outputs both, then ReLU6 where the layer has it; the SE block and the residual add as
// in OneDnnPlan. What LibTorch's BnMode::Calibrate forward computes (nn/supernet/SubnetWeights.h),
// to float rounding (docs/ONEDNN.md, "BN re-calibration"). NHWC throughout, buffers planned once.
// The forward stops at the feature mix layer's BN: nothing after it has statistics. Torch-free.
#include "nn/onednn/FoldedSubnet.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tinyscope {

// Per BN, in forward order: the sums over batches of (batch mean × images) and (biased batch
// variance × images), and the images summed — once-for-all's running averages weighted by batch size.
struct BnStatisticSums {
    std::vector<std::vector<double>> mean, var;
    std::int64_t images = 0;
};

// total += part, BN by BN and channel by channel (a part with no images adds nothing); summing
// batches' parts in a fixed order gives the same total however they were computed.
void addBnStatistics(BnStatisticSums& total, const BnStatisticSums& part);

class OneDnnCalibration {
public:
    // Primitives for batches of `batch` images, single-threaded: oneDNN's batch normalisation sums
    // a batch's statistics in per-thread parts, so on two threads they would differ in the last bits
    // from one thread's, and an int8 top-1 measured after them by an image now and then (the GUI on
    // two threads against make-accdata's one-thread workers); on one thread they are the same
    // wherever they are computed. Throws OneDnnRefused (OneDnnPlan.h) when oneDNN refuses a layer;
    // TINYSCOPE_ONEDNN_REFUSE=LAYER refuses one on demand.
    OneDnnCalibration(const UnfoldedSubnet& net, int batch);
    ~OneDnnCalibration();
    OneDnnCalibration(const OneDnnCalibration&) = delete;
    OneDnnCalibration& operator=(const OneDnnCalibration&) = delete;

    int batch() const;
    int resolution() const;
    std::size_t primitives() const;
    // batch() images (NCHW float at resolution()): adds each BN's batch statistics to `sums`.
    void run(const float* images, BnStatisticSums& sums);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tinyscope
