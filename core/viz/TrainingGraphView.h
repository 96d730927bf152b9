#pragma once
// Teaching views of a TrainingGraph (issue 22): which ops a view shows and how they are grouped,
// as plain data the interactive pane and the benchmark lay out with Graphviz.
//
//  * Whole graph   — every op; pruned ops grey and dashed (TrainingGraphDot's colours).
//  * Kept ops only — the ops the scheme runs (forward, loss, kept backward); pruned ops are
//                    removed, not greyed, so a sparser scheme draws a smaller graph.
//  * Backward only — the loss head and the kept backward ops (what runs after the forward pass).
//
// Collapse rule: the ops of one network block (Layer::block; outside blocks, one layer such as
// the stem or the classifier) and one pass (forward, or backward) become a single node "blocks.3 ·
// backward · 14 ops", unless the block is expanded. Never collapsed: the loss ops (where the
// backward starts) and every op that produces a parameter's gradient (the updated layers, green
// when kept, labelled with the parameter) — so the picture keeps what changes with the scheme.
// A group of one op is drawn as that op. Without a Network an op's group is its layer index.
#include "graph/TrainingGraph.h"
#include "viz/TrainingGraphDot.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

struct Network;

enum class TrainingGraphViewMode : std::uint8_t { Whole, Kept, Backward };
constexpr int kTrainingGraphViewModeCount = 3;
const char* trainingGraphViewModeName(TrainingGraphViewMode m);   // "whole graph", "kept ops only", "backward only"

struct TrainingGraphViewOptions {
    TrainingGraphViewMode mode = TrainingGraphViewMode::Whole;
    bool collapse = false;                 // group ops per block and pass
    std::set<int> expanded;                // groups drawn op by op although collapse is on
};

// Does the view show op `op`? (Independent of collapsing.)
bool trainingGraphViewShows(const TrainingGraph& g, TrainingGraphViewMode mode, int op);
// Number of ops the view shows.
int trainingGraphViewOpCount(const TrainingGraph& g, TrainingGraphViewMode mode);

struct TrainingGraphViewNode {
    std::string name;            // DOT node name: the op's "<type>#<index>", or "group <id> <pass>" (no '#')
    std::vector<int> ops;        // the ops it stands for (one for an op node)
    int group = -1;              // the op group (collapse unit), -1 for ungrouped ops
    bool collapsed = false;      // a group node
};

struct TrainingGraphViewEdge {
    int from = -1, to = -1;      // node indices
    int producer = -1, consumer = -1;   // one representative op pair (for the edge class)
};

struct TrainingGraphView {
    TrainingGraphViewOptions options;
    std::vector<int> opGroup;                // per op: its group, or -1 (never collapsed)
    std::vector<std::string> groupNames;     // per group: "blocks.3", "first_conv", "layer 7"
    std::vector<TrainingGraphViewNode> nodes;
    std::vector<int> nodeOfOp;               // per op: node index, or -1 when the view hides it
    std::vector<TrainingGraphViewEdge> edges;   // deduplicated, between different nodes

    int shownOps() const;
    int collapsedNodes() const;
};

TrainingGraphView buildTrainingGraphView(const TrainingGraph& g, const Network* net, const TrainingGraphViewOptions& options);

// Per view node: the class it is drawn with (a group: Pruned when none of its ops is live, the
// class of its pass otherwise).
std::vector<TrainingGraphNodeClass> trainingGraphViewNodeClasses(const TrainingGraph& g, const TrainingGraphView& v);
TrainingGraphEdgeClass trainingGraphViewEdgeClass(const TrainingGraph& g, const TrainingGraphView& v, const TrainingGraphViewEdge& e);

// The layout DOT of a view: no legend, stable labels (the layout of the whole view does not depend
// on bias choices), and the layout limits of `dot` (TrainingGraphDotOptions::layoutAttrs).
std::string trainingGraphViewDot(const TrainingGraph& g, const TrainingGraphView& v, const TrainingGraphDotOptions& options = {});

}  // namespace tinyscope
