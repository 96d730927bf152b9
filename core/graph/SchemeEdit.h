#pragma once
// Per-conv edits of a resolved sparse-update scheme (what the Training inspector's toggles do)
// and the way back to tiny-training's keys. A resolved scheme may hold choices tiny-training's
// config cannot express — bias updates that are not one tail ending at the last backbone conv,
// a weight updated outside that tail. The ledger and the graph handle any choice; only saving
// as a tiny-training config needs the tail, and says why when it is missing.
#include "graph/SparseScheme.h"

#include <string>

namespace tinyscope {

struct Layer;
struct Network;

// The classifier-only scheme of `net`: nothing in the backbone is updated.
ResolvedScheme classifierOnlyScheme(const Network& net);

// Sets what backbone conv `index` updates (the classifier is always updated: bias and full
// weight) and refreshes the derived fields. Throws InputError naming the conv when `ratio` is
// not one of 0, 1/8, 1/4, 1/2, 1 or selects no input channel.
void setConvUpdate(ResolvedScheme& s, const Network& net, int index, bool bias, double ratio);

// Whether `ratio` selects at least one input channel of conv `c` (0 always does: frozen).
bool ratioSelectsChannels(const Layer& c, double ratio);

// Why `s` has no tiny-training config ("" when it has one).
std::string schemeExpressibilityProblem(const ResolvedScheme& s, const Network& net);

// tiny-training's keys for `s`: n_bias_update, and manual_weight_idx / weight_update_ratio of
// the weight-updated backbone convs in index order. Throws InputError with the problem when
// schemeExpressibilityProblem is not empty.
SparseScheme sparseSchemeOf(const ResolvedScheme& s, const Network& net);

// Same bias flag, ratio and channel counts for every conv.
bool sameUpdates(const ResolvedScheme& a, const ResolvedScheme& b);
// The scheme in words: a published scheme's id ("mcunet-5fps/49kb"), else "n_bias_update N;
// weights 24 @ 1/4, ..." (or "custom (no tiny-training config)").
std::string describeScheme(const ResolvedScheme& s, const Network& net);

}  // namespace tinyscope
