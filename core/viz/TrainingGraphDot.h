#pragma once
// The forward + backward training graph as DOT text (one of the three readers of the plain
// TrainingGraph, beside the memory ledger and the TinyEngine writer): forward ops blue, the
// loss purple, live backward ops orange, gradient outputs green with their parameter name,
// ops the sparse scheme pruned grey and dashed; a legend. Node names are "<op type>#<index>"
// with the index into TrainingGraph::ops, so a view can map a click back to the op.
//
// The classification and styles (colours from the palette, viz/Palette.h) are public so an interactive view can recolour a laid-out
// graph after a bias toggle (which changes only liveness) exactly as the DOT would colour it.
#include "graph/TrainingGraph.h"

#include <string>
#include <vector>

namespace tinyscope {

// Bounded crossing minimisation: a thousand-op graph lays out in seconds, not minutes.
inline constexpr const char* kTrainingGraphLayoutAttrs = "mclimit=0.05 nslimit=1 nslimit1=1 remincross=false searchsize=5";
// The pane's options (issue 22, measured in bench_graph_layout): see docs/TRAINING_INSPECTOR.md.
inline constexpr const char* kTrainingGraphFastLayoutAttrs = "mclimit=0.05 nslimit=0.01 nslimit1=1 remincross=false searchsize=5 splines=line";

struct TrainingGraphDotOptions {
    std::string title;
    bool showPruned = true;      // false: only the ops the scheme keeps
    bool legend = true;
    std::string rankdir = "TB";
    // Label every op that produces a parameter's gradient with the parameter's name, whether or
    // not the scheme keeps it: node sizes (and so the layout) then do not depend on the scheme's
    // bias choices, and a view can recolour instead of laying out again.
    bool stableLabels = false;
    // Graph attributes that bound Graphviz's work (crossing minimisation, network simplex, edge
    // routing). The default keeps the layout of the pane and of the exports; see
    // kTrainingGraphFastLayout for large graphs.
    std::string layoutAttrs = kTrainingGraphLayoutAttrs;
    // false: no colours, dashes or pen widths (a view restyles every item after the layout), so the
    // DOT — a layout cache's key — does not change when only liveness does. Teaching views only.
    bool styles = true;
};

std::string trainingGraphDot(const TrainingGraph& g, const TrainingGraphDotOptions& options = {});

// "nn.mcuconv2d#12"
std::string trainingGraphNodeName(const TrainingGraph& g, int op);

enum class TrainingGraphNodeClass : std::uint8_t { Forward, Loss, Backward, GradientOutput, Pruned };
enum class TrainingGraphEdgeClass : std::uint8_t { Data, Saved, Pruned };

struct TrainingGraphNodeStyle {
    const char* fill;
    const char* border;
    const char* font;
    bool dashed;
    double penwidth;
    const char* legend;          // legend text, e.g. "backward (float32)"
};
struct TrainingGraphEdgeStyle {
    const char* color;
    bool dashed;
};

// Per op, from the graph's liveness and outputs.
std::vector<TrainingGraphNodeClass> trainingGraphNodeClasses(const TrainingGraph& g);
// The edge from the op producing an input of `consumer` to `consumer`.
TrainingGraphEdgeClass trainingGraphEdgeClass(const TrainingGraph& g, int producer, int consumer);
const TrainingGraphNodeStyle& trainingGraphNodeStyle(TrainingGraphNodeClass c);
const TrainingGraphEdgeStyle& trainingGraphEdgeStyle(TrainingGraphEdgeClass c);

// Pieces of the DOT text, shared with the teaching views (TrainingGraphView.h).
// Per op, the node label: op type, output shape and dtype, and the parameter whose gradient it holds.
std::vector<std::string> trainingGraphOpLabels(const TrainingGraph& g, bool stableLabels);
std::string trainingGraphOpTooltip(const TrainingGraph& g, int op);
// `fillcolor=... color=... fontcolor=...` (and penwidth, dashes) of a node style.
std::string trainingGraphNodeAttrs(TrainingGraphNodeClass c);
// "digraph training_graph {" with the graph, node and edge defaults.
std::string trainingGraphDotHeader(const TrainingGraphDotOptions& options);
// The attribute list of an edge of that class ("" for a plain data edge).
std::string trainingGraphEdgeAttrs(TrainingGraphEdgeClass c, bool saved);

}  // namespace tinyscope
