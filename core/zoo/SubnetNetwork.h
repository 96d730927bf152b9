#pragma once
// The network of a design-space subnet (see docs/DESIGN_SPACE.md) as a zoo Network: conv + BN
// layers, squeeze-excite as pool → reduce → expand (h-sigmoid) → channel scale, identity
// residual adds, feature mix, global pool and a linear classifier. Params and MACs equal the
// cost model's `params` and `macs_without_bn`.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "space/SubnetLayout.h"
#include "zoo/Network.h"

namespace tinyscope {

// `config` is validated against `space` (InputError naming the field otherwise).
Network networkFromSubnet(const DesignSpace& space, const SubnetConfig& config, const std::string& name = "subnet");
// The same for a resolved layout, e.g. one narrowed by channel pruning (space/ChannelWidths.h).
Network networkFromLayout(const SubnetLayout& layout, const std::string& spaceName, const std::string& name = "subnet");

}  // namespace tinyscope
