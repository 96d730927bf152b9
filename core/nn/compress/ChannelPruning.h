#pragma once
// Channel pruning of a subnet — Lab 1's channel_prune and apply_channel_sorting on the MCUNet
// blocks (issue 50, docs/COMPRESSION.md "Channel pruning"). A channel group is a set of channels
// that one conv produces and the following layers only read, so that dropping some of them leaves
// an ordinary narrower network:
//   "first_conv"         the stem's outputs, read by block 0's pointwise conv (not when block 0 adds
//                        them back: a residual)
//   "blocks.N"           block N's expanded channels: the inverted bottleneck's outputs, the depthwise
//                        conv, the squeeze-excite's input and gates, the projection's inputs
//   "feature_mix_layer"  the feature mix's outputs, read by the classifier
// Block outputs are not groups: residual additions tie them across a stage.
// Pruning keeps the first round(channels × (1 − ratio)) channels of a group (the lab's
// get_num_channels_to_keep); sorting first orders each group by the importance of its channels in
// the next layer that mixes channels — the Frobenius norm of that layer's weight over the channel's
// input column (the projection for a block, block 0's pointwise conv for the stem, the classifier
// for the feature mix), descending — which changes nothing the network computes. Includes LibTorch
// types (Subnet).
#include "compress/Pruning.h"
#include "nn/supernet/Supernet.h"
#include "space/ChannelWidths.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

// The subnet's channel groups in forward order, kept = channels.
std::vector<ChannelGroup> channelGroups(const Subnet& sub);

// Reorders every group by importance, in place (an equivalent network).
void sortChannels(Subnet& sub);

// The groups as pruning at these ratios (by name; the others at `uniform`) would leave them,
// nothing changed. Throws InputError for a ratio outside [0, 1], a name that is not a group
// (naming those that are), or a ratio that would leave a group no channel.
std::vector<ChannelGroup> plannedChannels(const Subnet& sub, double uniform, const std::map<std::string, double>& ratios = {});
// Prunes them so, in place: the layout's widths and every tensor follow. Returns the groups.
std::vector<ChannelGroup> pruneChannels(Subnet& sub, double uniform, const std::map<std::string, double>& ratios = {});
// Keeps the first `widths` channels of the named groups, in place (the shapes of a pruned subnet's
// checkpoint, SubnetCheckpoint.h). InputError starting with `source` as narrowLayout's.
void narrowChannels(Subnet& sub, const ChannelWidths& widths, const std::string& source);

}  // namespace tinyscope
