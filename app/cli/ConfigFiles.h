#pragma once
// Subnet configs given on the command line: a JSON file holding one config or an array of them,
// or `--random N [--seed S]` draws.
#include "cli/CliArgs.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <string>
#include <vector>

namespace tinyscope::cli {

std::vector<SubnetConfig> readConfigs(const std::string& path, const DesignSpace& space);

// `--random N [--seed S]`: N subnets drawn like the lab's random_sample_arch after random.seed(S)
// (S defaults to 0), appended to `out`. --seed without --random is refused.
void appendRandomConfigs(const CliArgs& a, const DesignSpace& space, std::vector<SubnetConfig>& out);

}  // namespace tinyscope::cli
