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

struct TrainingGraphDotOptions {
    std::string title;
    bool showPruned = true;      // false: only the ops the scheme keeps
    bool legend = true;
    std::string rankdir = "TB";
    // Label every op that produces a parameter's gradient with the parameter's name, whether or
    // not the scheme keeps it: node sizes (and so the layout) then do not depend on the scheme's
    // bias choices, and a view can recolour instead of laying out again.
    bool stableLabels = false;
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

}  // namespace tinyscope
