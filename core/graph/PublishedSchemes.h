#pragma once
// The sparse-update schemes MIT published for the tiny-training models (compilation/
// mcu_ir_gen.py: five per model, named after their analytic extra memory) and the algorithm
// README's "last 12 layers" reference for mcunet-5fps. Only the scheme keys are stored; every
// memory figure is computed (MemoryLedger) and compared with the reference tables in tests.
#include "graph/SparseScheme.h"

#include <string>
#include <vector>

namespace tinyscope {

struct Network;

struct PublishedScheme {
    std::string model;   // zoo name, e.g. "mcunet-5fps"
    std::string name;    // "49kb", ..., "readme_last12_layers"
    std::string kind;    // "published" | "readme_reference"
    SparseScheme scheme;
    std::string id() const { return model + "/" + name; }
};

const std::vector<PublishedScheme>& publishedSchemes();
std::vector<PublishedScheme> publishedSchemesFor(const std::string& model);

// A scheme by name: "mcunet-5fps/49kb"; with `model` given also "49kb"; patterns that work for
// any model: "bias-only" (all backbone biases), "bias-only:N", "last:K" (last K convs, bias +
// full weight), "full", "classifier" (classifier only). Throws InputError listing the names.
SparseScheme schemeByName(const std::string& name, const Network* model);
// A scheme file (.json/.yaml/.yml) when `spec` names an existing file, else schemeByName.
SparseScheme loadScheme(const std::string& spec, const Network* model);

}  // namespace tinyscope
