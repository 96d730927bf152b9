#pragma once
// Pruning as Lab 1 of MIT 6.5940 defines it, on plain float arrays (the weights of a conv or linear
// layer, any layout; issue 50, docs/COMPRESSION.md). Torch-free and Qt-free.
//
// Fine-grained (magnitude) pruning of one tensor, the lab's fine_grained_prune:
// * the sparsity is clamped to [0, 1]; 1 prunes everything, 0 nothing;
// * otherwise num_zeros = round(numel × sparsity) (Python's round: half to even, on the double
//   product), the importance is |w|, the threshold is the num_zeros-th smallest importance
//   (kthvalue, 1-based), and a weight is kept when its importance is greater than the threshold:
//   ties at the threshold are pruned, so more than num_zeros weights can go.
// * One deliberate difference: where num_zeros rounds to 0 (a tiny tensor, a tiny sparsity) the
//   lab's kthvalue(0) raises; here nothing is pruned.
//
// Channel pruning keeps the first round(channels × (1 − ratio)) channels (get_num_channels_to_keep);
// apply_channel_sorting orders a layer's output channels by the Frobenius norm of the next layer's
// weights on them (descending) first.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

// The lab's mask (1 keep, 0 prune) of `n` weights at `sparsity`.
std::vector<std::uint8_t> magnitudeMask(const float* w, std::size_t n, double sparsity);
// The mask applied in place (w · mask); returns the mask.
std::vector<std::uint8_t> pruneByMagnitude(float* w, std::size_t n, double sparsity);
// w · mask in place (the pruner re-applies its masks after every optimizer step).
void applyMask(float* w, const std::vector<std::uint8_t>& mask);

std::size_t countNonZero(const float* w, std::size_t n);
// The lab's get_model_size: elements (or non-zero elements only) × bits, in bits.
std::int64_t modelSizeBits(std::int64_t elements, int bits);

// round(channels × (1 − ratio)) with Python's round; `ratio` in [0, 1].
int channelsToKeep(int channels, double ratio);

// One channel group of a network as channel pruning leaves it (nn/compress/ChannelPruning.h).
struct ChannelGroup {
    std::string name;      // "blocks.3"
    int channels = 0;      // before
    int kept = 0;          // after (channels when not pruned)
    double ratio = 0;      // asked
};

// The importance of each input channel of a weight laid out [O][I][rest…] (a conv's OIHW, a
// linear layer's [O][I]): the Frobenius norm of w[:, i], over all outputs and the rest.
std::vector<double> inputChannelImportance(const float* w, int outputs, int inputs, std::size_t rest);
// Channel order by importance, descending (the lab's torch.argsort(descending=True); equal
// importances keep their original order).
std::vector<int> channelOrderByImportance(const std::vector<double>& importance);

}  // namespace tinyscope
