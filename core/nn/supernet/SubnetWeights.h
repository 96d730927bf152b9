#pragma once
// The weights of one concrete network of the MCUNet family as plain tensors, and its forward
// pass. A Supernet produces them as differentiable views (slices, kernel transforms) for
// training; extracting a subnet clones them into owned tensors. One forward for both.
#include "space/SubnetLayout.h"

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <vector>

namespace tinyscope {

struct BnWeights {
    at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};

struct ConvBn {
    at::Tensor weight;   // OIHW
    int stride = 1, groups = 1;
    BnWeights bn;
    at::Tensor folded_weight, folded_bias;   // BN folded into the conv (eval only), empty if not folded
};

struct BlockWeights {
    BlockShape shape;
    ConvBn ib, dw, pl;                   // ib/dw unused for the fused block 0
    at::Tensor se_reduce_w, se_reduce_b, se_expand_w, se_expand_b;   // undefined without SE
};

struct NetWeights {
    SubnetLayout layout;
    ConvBn first;
    std::vector<BlockWeights> blocks;    // block 0 first
    ConvBn mix;
    at::Tensor fc_w, fc_b;
    double bn_eps = 1e-3;
};

// How BatchNorm behaves in a forward pass.
enum class BnMode {
    Eval,        // running statistics (or folded weights when present)
    Train,       // batch statistics; running statistics updated with momentum 0.1
    Calibrate,   // batch statistics, recorded for once-for-all BN re-calibration (no update)
};

// Per-BN accumulators for re-calibration: the mean over batches (weighted by batch size) of the
// batch mean and of the batch (biased) variance, as once-for-all's set_running_statistics does.
struct BnCalibration {
    std::vector<at::Tensor> mean_sum, var_sum;
    std::int64_t count = 0;   // images seen
};

struct ForwardOptions {
    BnMode bn = BnMode::Eval;
    double momentum = 0.1;
    BnCalibration* calibration = nullptr;                  // required for BnMode::Calibrate
    std::vector<std::pair<std::string, at::Tensor>>* trace = nullptr;   // module outputs, for debugging
    // Activations in NHWC (channels-last) memory: the same numbers as NCHW to float rounding, and
    // oneDNN's depthwise and 1x1 kernels are 2-3x faster on it (bench_train_step). false: NCHW.
    bool channels_last = true;
    // Data-parallel training (DistributedContext): BnMode::Train normalises with the statistics of
    // the global batch, summed over ranks by this differentiable function (synchronised batch norm),
    // so N ranks with batch B train as one with batch N*B. Empty: this process's batch alone.
    std::function<at::Tensor(const at::Tensor&)> sum_across_ranks;
};

at::Tensor forwardNet(const NetWeights& net, const at::Tensor& x, const ForwardOptions& options = {});

// Visits every ConvBn of the net in forward order (first, blocks' ib/dw/pl, mix).
template <class F>
void forEachConvBn(NetWeights& net, F&& f)
{
    f(net.first);
    for (BlockWeights& b : net.blocks) {
        if (!b.shape.fused) {
            f(b.ib);
            f(b.dw);
        }
        f(b.pl);
    }
    f(net.mix);
}

// Writes the calibrated statistics into the nets' running_mean / running_var (copying in place,
// so a supernet's slices update the supernet).
void applyCalibration(NetWeights& net, const BnCalibration& calibration);
// Folds BN into each conv (eval-mode forward uses them); unfoldBn drops them.
void foldBn(NetWeights& net);
void unfoldBn(NetWeights& net);

}  // namespace tinyscope
