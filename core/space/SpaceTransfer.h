#pragma once
// Moving a subnet between two spaces of the same family (e.g. the Lab-3 VWW space and the
// Fashion-MNIST space): the same blocks, kernels, expands, depths and width, at the resolution of
// the same rank. Used only where the workbench says so (a measurement or deploy labelled
// "transferred"); never silently.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

namespace tinyscope {

// The same blocks in `to` (same block layout, widths and choices), with the resolution of the same
// rank (clamped). Throws InputError when the spaces differ in structure.
SubnetConfig transferConfig(const SubnetConfig& config, const DesignSpace& from, const DesignSpace& to);

}  // namespace tinyscope
