#pragma once
// Design spaces shipped with Tinyscope (models/spaces/*.json), compiled into the binary so the
// app and the CLI work without any files, plus lookup of a space by preset name or path.
#include "space/DesignSpace.h"

#include <string>
#include <vector>

namespace tinyscope {

std::vector<std::string> presetSpaceNames();            // e.g. {"mcunet-fmnist", "mcunet-vww"}
DesignSpace presetSpace(const std::string& name);       // throws InputError listing the presets
// A preset name, or a path to a space JSON file.
DesignSpace loadSpace(const std::string& nameOrPath);

// The space of the first-start workspace (workspace/Workspace.h: the first shipped one): what the
// CLI searches, costs and evaluates without --space, and the space of a model given without one.
const char* defaultSpaceName();                          // "mcunet-fmnist"
// `nameOrPath`, or defaultSpaceName() when it is empty (a model given without a space): the one place
// that says so.
std::string spaceOrDefault(const std::string& nameOrPath);

}  // namespace tinyscope
