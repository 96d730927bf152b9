#pragma once
// The lab's block diagram of a subnet as DOT text: MBConv{e}-{k}x{k} blocks coloured by kernel
// size (palette roles arch.kernel3/5/7, core/viz/Palette.h), node width by expand ratio, grey stage dividers,
// and the true feature-map size on every edge (the lab's labels are wrong at 112/144).
// Stem, fused block 0 and head are drawn too. Each stage is one row.
#include "cost/CostModel.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <string>

namespace tinyscope {

struct ArchDiagramOptions {
    std::string title;          // drawn above the diagram (e.g. "MACs(M): 12.50 PeakMem(KB): 100.00")
    bool rowPerStage = true;    // false: one vertical chain as in the lab
    int highlightBlock = -1;    // supernet block index drawn with a thick outline (e.g. the peak block)
};

const char* kernelColour(int kernel);   // the palette's arch.kernel3/5/7 (arch.kernel-other for other sizes)

std::string archDiagramDot(const DesignSpace& space, const SubnetConfig& config,
                           const ArchDiagramOptions& options = {});

// What the app and the CLI draw for a costed subnet: the lab's title "MACs(M): 12.50  PeakMem(KB):
// 100.00" (after "predicted top-1 91.23 %   " when one is given) and the peak-SRAM block outlined.
ArchDiagramOptions costedDiagramOptions(const CostReport& report, double predictedTop1Percent = -1);

}  // namespace tinyscope
