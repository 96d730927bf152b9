#pragma once
// What TinyEngine's training code generator and its bundled kernel library can compile
// (TINYENGINE_JSON_SPEC.md §9.7), checked for a network and a sparse-update scheme before
// anything is exported: per conv, the choices (bias/weight update, the input gradient the
// updates below force through it) that have no kernel; for the model, what no scheme can fix
// (ops outside the vocabulary, forward kernels the float-requantised library lacks).
//
// Interpretation where §9.7 is terse: "C % 4 == 0" for the input gradient through a 1×1 conv is
// taken on the channels that gradient has (the conv's C_in); the weight-gradient map is the
// conv's output map (equal to its input map for the 1×1 stride-1 convs that qualify).
#include "graph/SparseScheme.h"
#include "zoo/Network.h"

#include <string>
#include <vector>

namespace tinyscope {

struct CoverageFinding {
    int conv_index = -1;       // -1: the model as a whole
    std::string message;
};

std::vector<CoverageFinding> kernelCoverageFindings(const Network& net, const ResolvedScheme& scheme);

// The kernel rules themselves (§9.7), for callers that decide before a scheme exists:
// a depthwise conv TinyEngine has forward and input-gradient kernels for (3/5/7, stride 1/2);
// a conv whose weight gradient it has a kernel for (1×1 stride 1, not depthwise, on a 4×4 or 8×8
// map, C_out % 8 == 0).
bool depthwiseKernelExists(const Layer& c);
bool weightGradientKernelExists(const Layer& c);

// Convs whose input gradient the scheme needs: some updated conv lies before them on a path
// from the input (back-propagation passes through them). Per conv index.
std::vector<char> convsPassingGradient(const Network& net, const ResolvedScheme& scheme);

}  // namespace tinyscope
