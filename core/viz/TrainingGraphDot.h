#pragma once
// The forward + backward training graph as DOT text (one of the three readers of the plain
// TrainingGraph, beside the memory ledger and the TinyEngine writer): forward ops blue, the
// loss purple, live backward ops orange, gradient outputs green with their parameter name,
// ops the sparse scheme pruned grey and dashed; a legend. Node names are "<op type>#<index>"
// with the index into TrainingGraph::ops, so a view can map a click back to the op.
#include "graph/TrainingGraph.h"

#include <string>

namespace tinyscope {

struct TrainingGraphDotOptions {
    std::string title;
    bool showPruned = true;      // false: only the ops the scheme keeps
    bool legend = true;
    std::string rankdir = "TB";
};

std::string trainingGraphDot(const TrainingGraph& g, const TrainingGraphDotOptions& options = {});

// "nn.mcuconv2d#12"
std::string trainingGraphNodeName(const TrainingGraph& g, int op);

}  // namespace tinyscope
