#pragma once
// Dead-code elimination over a TrainingGraph: marks the ops the graph outputs depend on and
// orders them as TinyEngine's JSON does (post-order walk of the output tuple, arguments in
// order), which is what physically prunes the backward graph to the sparse scheme.
#include "graph/TrainingGraph.h"

namespace tinyscope {

// Sets `g.live` and `g.order` from `g.outputs`.
void eliminateDeadCode(TrainingGraph& g);

// Number of live argument slots that read each tensor (TinyEngine's `children`; 0 for outputs).
std::vector<int> liveConsumerCounts(const TrainingGraph& g);

}  // namespace tinyscope
