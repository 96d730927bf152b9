#pragma once
// Compile-time autodiff: walks the forward graph from the loss and applies the gradient rule of
// every op (GradientRules.h), then the sparse scheme picks which parameter gradients are graph
// outputs and dead-code elimination prunes the rest.
//
// Two walks (docs/TRAINING_GRAPH.md):
//  * correct (default): reverse topological order; gradients that reach a tensor from several
//    consumers are summed with `add` (residual skips, the squeeze-excite gate);
//  * reference: MIT's AutoDiff exactly — a depth-first walk from the loss that visits arguments
//    in reverse order and overwrites a tensor's gradient on every write, so a tensor keeps the
//    contribution written last before it is first visited (at an nn.mcuadd the skip path is lost).
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "zoo/Network.h"

namespace tinyscope {

// The full training graph of `net` under `scheme`: forward + loss, the backward ops of every
// weight and bias (the ones the scheme does not update are kept but not live), outputs chosen
// by the scheme, dead code marked. The weight-gradient chains use the scheme's channel counts
// (reference mode: the compiler's rounding).
TrainingGraph buildTrainingGraph(const Network& net, const ResolvedScheme& scheme,
                                 AutodiffMode mode = AutodiffMode::Correct);

// Picks the outputs for `scheme` on a graph built for the same network and mode and re-runs
// dead-code elimination (the fast path for bias toggles). Returns false, changing nothing, when
// a weight chain was built with other channel counts than `scheme` needs: rebuild then.
bool selectOutputs(TrainingGraph& g, const Network& net, const ResolvedScheme& scheme);

}  // namespace tinyscope
