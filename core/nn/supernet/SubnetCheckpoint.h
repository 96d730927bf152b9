#pragma once
// A subnet's own checkpoint: the state dict `tinyscope prune --out` writes as subnet.pth (the lab's
// extracted-subnet keys, Subnet::stateDict) for the subnet `config` of `space` with its channel
// groups narrowed to `widths` (space/ChannelWidths.h; empty for a fine-grained pruned or fine-tuned
// subnet). The shapes come from that layout alone, no supernet is needed; every key and shape is
// checked and a missing or unexpected key or a shape mismatch is an InputError naming the file,
// the key and both shapes. Includes LibTorch types (Subnet).
#include "JobControl.h"
#include "io/AtomicFolder.h"
#include "nn/supernet/Supernet.h"
#include "space/ChannelWidths.h"

#include <string>
#include <vector>

namespace tinyscope {

Subnet subnetFromStateDict(const DesignSpace& space, const SubnetConfig& config, const ChannelWidths& widths, const StateDict& sd,
                           const std::string& source);
Subnet loadSubnetCheckpoint(const DesignSpace& space, const SubnetConfig& config, const ChannelWidths& widths, const std::string& path);

// Saves `sub` on its own into `folder`, all or nothing, the folder's other files kept: subnet.pth
// (its state dict, wrapped as the lab's files), subnet.json (its config), space.json (its design
// space) and `more` (prune adds pruning.json, whose "channels" → "groups" give a channel-pruned
// subnet's widths to ModelSource::subnetFolder, the reader).
void writeSubnetFolder(const std::string& folder, const Subnet& sub, std::vector<NamedFile> more = {}, const JobControl& job = {});

}  // namespace tinyscope
