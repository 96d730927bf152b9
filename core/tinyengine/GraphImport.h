#pragma once
// Opening an existing TinyEngine training graph (graph JSON + optional params pickle and
// scale.json) for inspection: the graph itself, the network its forward ops describe (so the
// memory ledger and the views can read it), and the sparse-update scheme its gradient leaves
// imply. Torch-free.
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <optional>
#include <string>
#include <vector>

namespace tinyscope {

struct ImportedGraph {
    std::string source;          // the graph file
    TrainingGraph graph;
    Network network;             // recovered from the forward ops
    SparseScheme scheme;         // recovered from the gradient leaves (ratios 0 are omitted)
    std::vector<std::string> notes;   // what the scheme keys cannot say (e.g. a bias set that is not a tail)
    std::optional<QuantizedParams> params;   // params pickle (+ scale.json), when given

    int forwardOps() const { return graph.forward_ops; }
    Json summaryJson() const;    // ops, forward_ops, outputs[], op_type_counts, scheme keys, network counts
};

// Builds the Network of the forward ops: nn.mcuconv2d → conv (geometry from attrs and the weight
// shape; bias; activation ReLU6 when the params say zero_y = −128, else unknown = none),
// nn.mcuadd → residual add, mcumean → global pool, nn.mcumultiply → channel scale. Layer names
// and blocks follow the parameter prefixes ("v9_conv_0" → block 8). Sets every op's layer and
// the graph's model name. Throws InputError naming the op when the forward ops do not form a network.
Network recoverNetwork(TrainingGraph& g, const std::string& name, const QuantizedParams* params = nullptr);

// The scheme whose compiled graph has these gradient leaves.
SparseScheme recoverScheme(const TrainingGraph& g, const Network& net, std::vector<std::string>* notes = nullptr);

// Reads a graph file; `paramsPath` / `scalesPath` may be empty. The params are checked against
// the graph (missing arrays, dtype and shape mismatches throw InputError naming the key).
ImportedGraph importTinyEngineGraph(const std::string& graphPath, const std::string& paramsPath = "",
                                    const std::string& scalesPath = "");

}  // namespace tinyscope
