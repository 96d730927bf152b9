#pragma once
// Export of a quantized network and a sparse-update scheme to TinyEngine's three files:
// `<name>-graph.json` (GraphJson.h), `<name>-params.pkl` and `scale.json` (QuantizedParams.h).
// Two forms (docs/TINYENGINE_EXPORT.md):
//  * reference (default): MIT's compiler's graph (reference autodiff: residual skip gradient
//    dropped, zero point ignored in weight gradients, dummy classifier zero gradients) plus the
//    identity strided_slice that ratio-1 inner weight updates need to link (§9.7);
//  * faithful: the correct autodiff (gradients summed at residual adds, x − zero_x), same slices;
//    the checker refuses it for TinyEngine (its sub() cannot broadcast x − zero_x).
// The checker's findings (ExportChecker.h) come with the plan, before anything is written.
// Torch-free.
#include "JobControl.h"
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "tinyengine/ExportChecker.h"
#include "tinyengine/GraphJson.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <string>
#include <vector>

namespace tinyscope {

enum class ExportForm { Reference, Faithful };
const char* exportFormName(ExportForm f);          // "reference", "faithful"
ExportForm parseExportForm(const std::string& s);   // throws InputError
// Reference: `meta.children` as MIT's compiler writes it (1 for any consumed tensor);
// faithful: the exact consumer counts.
ChildrenCount childrenCountFor(ExportForm f);

// Inserts strided_slice(begin 0, end = full shape) between the cast of the saved input and the
// reshape of every non-classifier weight-gradient chain that has no slice (ratio-1 updates), then
// re-runs dead-code elimination so `order` includes them. Returns how many were inserted.
int insertIdentitySlices(TrainingGraph& g, const Network& net);

struct ExportPlan {
    std::string name;               // file stem: <name>-graph.json, <name>-params.pkl
    ExportForm form = ExportForm::Reference;
    Network network;
    ResolvedScheme scheme;
    TrainingGraph graph;
    QuantizedParams params;         // every parameter of the graph, in first-use order, + scales
    std::vector<Finding> findings;
    int identity_slices = 0;

    int errors() const { return errorCount(findings); }
};

// Builds the graph for `form`, orders the params like the graph, and runs the checker.
ExportPlan planExport(const Network& net, const QuantizedParams& params, const SparseScheme& scheme, ExportForm form,
                      const std::string& name);

struct ExportedFiles {
    std::string graph, params, scales;
    std::int64_t graph_bytes = 0, params_bytes = 0, scales_bytes = 0;
};

// Writes the three files into `dir` (created if missing), all or nothing: the folder is replaced
// as a whole (io/AtomicFolder.h), so after a failure, a kill or a power cut it holds the complete
// earlier set or the complete new one; its other files are kept. `strict`: refuse (InputError
// listing the first error) when the plan has error findings.
ExportedFiles writeExport(const ExportPlan& plan, const std::string& dir, bool strict = false, const JobControl& job = {});

}  // namespace tinyscope
