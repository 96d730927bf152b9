#include "space/SpaceTransfer.h"

#include "Error.h"

#include <algorithm>

namespace tinyscope {

SubnetConfig transferConfig(const SubnetConfig& c, const DesignSpace& from, const DesignSpace& to)
{
    if (from.name == to.name) return c;
    auto same = [&]() {
        if (from.maxBlocks() != to.maxBlocks() || from.numStages() != to.numStages() || from.numWidths() != to.numWidths())
            return false;
        for (int s = 0; s < from.numStages(); ++s)
            if (from.stages[static_cast<std::size_t>(s)].max_blocks != to.stages[static_cast<std::size_t>(s)].max_blocks) return false;
        return true;
    };
    if (!same())
        throw InputError("the subnet of space '" + from.name + "' has another block layout than space '" + to.name +
                         "'; select a subnet of '" + to.name + "'");
    SubnetConfig out = c;
    const int rank = from.resolutionIndex(c.image_size);
    out.image_size = to.resolutions[static_cast<std::size_t>(std::min<int>(std::max(rank, 0), static_cast<int>(to.resolutions.size()) - 1))];
    out.validate(to, "subnet transferred to space '" + to.name + "'");
    return out;
}

}  // namespace tinyscope
