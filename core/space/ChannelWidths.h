#pragma once
// A subnet's channel groups and a layout narrowed to other widths: what a channel-pruned subnet is
// (nn/compress/ChannelPruning.h prunes the tensors; docs/COMPRESSION.md "Channel pruning"). A group
// is a set of channels one conv produces and only the following layers read:
//   "first_conv"         the stem's outputs (not when block 0 adds them back: a residual)
//   "blocks.N"           block N's expanded channels (N ≥ 1)
//   "feature_mix_layer"  the feature mix's outputs
// Narrowing a group changes its width only: the squeeze-excite reduce width, the block outputs and
// the feature-map sizes stay. Torch-free.
#include "compress/Pruning.h"
#include "space/SubnetLayout.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

// Kept channels per group name; a group not named keeps its width.
using ChannelWidths = std::map<std::string, int>;

// The layout's groups in forward order, kept = channels = the layout's width.
std::vector<ChannelGroup> channelGroupsOf(const SubnetLayout& layout);

// Sets the named groups' widths. InputError (starting with `source`) for a name that is not a group
// (naming those that are) or a width outside [1, the group's width in `layout`].
void narrowLayout(SubnetLayout& layout, const ChannelWidths& widths, const std::string& source);

// The layout of `config` (valid in `space`) narrowed to `widths` (narrowLayout's errors).
SubnetLayout narrowedLayout(const DesignSpace& space, const SubnetConfig& config, const ChannelWidths& widths, const std::string& source);

// The kept widths of the groups pruning narrowed (kept < channels).
ChannelWidths narrowedWidths(const std::vector<ChannelGroup>& groups);

}  // namespace tinyscope
