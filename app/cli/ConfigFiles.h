#pragma once
// Subnet configs given on the command line: a JSON file holding one config or an array of them.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <string>
#include <vector>

namespace tinyscope::cli {

std::vector<SubnetConfig> readConfigs(const std::string& path, const DesignSpace& space);

}  // namespace tinyscope::cli
