#pragma once
// TinyEngine's training-graph JSON (TINYENGINE_JSON_SPEC.md §2–§4): a bare array of ops in
// execution order, five keys per op and per tensor, `meta.children` / `output_info` on outputs,
// constants with `meta.data`. Writing walks `TrainingGraph::order`; reading rebuilds a graph
// whose `order` is the file's order. Torch-free.
#include "graph/TrainingGraph.h"

#include <cstddef>
#include <string>

namespace tinyscope {

// How `meta.children` is written: the number of consuming argument slots (the spec's
// definition, what the hand-made example uses), or as MIT's compiler wrote the real 49kb file:
// 1 for every consumed tensor, 0 for graph outputs.
enum class ChildrenCount { Exact, Compiler };

// The JSON text (indent 2, Relay's attribute order, names "<type>@<index>", activations
// "out_<producer>", constants "<consumer>-constant"), as MIT's compiler writes it.
std::string graphJsonText(const TrainingGraph& g, ChildrenCount children = ChildrenCount::Exact);

// The most ops a graph file may have (docs/INPUT_LIMITS.md): MIT's published graphs have hundreds
// (the 49kb MCUNet graph 423); reading is linear in the ops, so the bound only keeps a hostile
// file from taking minutes and gigabytes.
constexpr std::size_t kMaxGraphOps = 100000;

// Parses the file's ops into a TrainingGraph: tensors, ops (kind, attrs, inputs, output), phases
// (forward + loss up to the loss op, backward after), roles inferred from the idioms, outputs
// from the leaves' output_info, `live` = all, `order` = file order. Malformed files throw
// InputError naming the source, the op index and the field ("g.json: op 12 (where@12):
// inputs[2].name: 'out_zeros@99' is not produced by an earlier op"). `meta.children` must be the
// exact count or the compiler's 1.
TrainingGraph readGraphJson(const Json& ops, const std::string& source);

}  // namespace tinyscope
