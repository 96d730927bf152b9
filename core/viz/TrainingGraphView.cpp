#include "viz/TrainingGraphView.h"

#include "viz/GraphvizRenderer.h"
#include "zoo/Network.h"

#include <map>
#include <sstream>

namespace tinyscope {

namespace {

// The pass a group node stands for: forward (forward + loss phase) or backward.
bool isBackward(const Op& o) { return o.phase == Phase::Backward; }

}  // namespace

const char* trainingGraphViewModeName(TrainingGraphViewMode m)
{
    switch (m) {
    case TrainingGraphViewMode::Whole: return "whole graph";
    case TrainingGraphViewMode::Kept: return "kept ops only";
    case TrainingGraphViewMode::Backward: return "backward only";
    }
    return "?";
}

bool trainingGraphViewShows(const TrainingGraph& g, TrainingGraphViewMode mode, int op)
{
    switch (mode) {
    case TrainingGraphViewMode::Whole: return true;
    case TrainingGraphViewMode::Kept: return g.isLive(op);
    case TrainingGraphViewMode::Backward: return g.isLive(op) && g.op(op).phase != Phase::Forward;
    }
    return false;
}

int trainingGraphViewOpCount(const TrainingGraph& g, TrainingGraphViewMode mode)
{
    int n = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) n += trainingGraphViewShows(g, mode, static_cast<int>(i)) ? 1 : 0;
    return n;
}

int TrainingGraphView::shownOps() const
{
    int n = 0;
    for (int node : nodeOfOp) n += node >= 0 ? 1 : 0;
    return n;
}

int TrainingGraphView::collapsedNodes() const
{
    int n = 0;
    for (const TrainingGraphViewNode& node : nodes) n += node.collapsed ? 1 : 0;
    return n;
}

TrainingGraphView buildTrainingGraphView(const TrainingGraph& g, const Network* net, const TrainingGraphViewOptions& options)
{
    TrainingGraphView v;
    v.options = options;
    const std::size_t n = g.ops.size();

    // Groups: per block (or per layer outside blocks); the loss ops and the parameter-gradient ops
    // stay ungrouped.
    std::vector<char> gradientTensor(g.tensors.size(), 0);
    for (int t : g.parameter_gradient)
        if (t >= 0) gradientTensor[static_cast<std::size_t>(t)] = 1;
    for (const GraphOutput& o : g.outputs)
        if (o.kind != GradientKind::Loss) gradientTensor[static_cast<std::size_t>(o.tensor)] = 1;
    std::map<std::string, int> groupId;
    v.opGroup.assign(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
        const Op& o = g.ops[i];
        if (o.phase == Phase::Loss || o.layer < 0 || gradientTensor[static_cast<std::size_t>(o.output)]) continue;
        std::string key;
        if (net && o.layer < static_cast<int>(net->layers.size())) {
            const Layer& l = net->layer(o.layer);
            if (l.block >= 0) {
                // "blocks.3.dw" -> "blocks.3"; a name without two dots keeps "block 3".
                const std::size_t dot = l.name.find('.', l.name.find('.') + 1);
                key = dot != std::string::npos && l.name.find('.') != std::string::npos ? l.name.substr(0, dot) : "block " + std::to_string(l.block);
            } else {
                key = l.name;
            }
        } else {
            key = "layer " + std::to_string(o.layer);
        }
        auto [it, fresh] = groupId.emplace(key, static_cast<int>(v.groupNames.size()));
        if (fresh) v.groupNames.push_back(key);
        v.opGroup[i] = it->second;
    }

    // Nodes: shown ops, one per op unless its (group, pass) is collapsed and has two or more shown ops.
    std::map<std::pair<int, bool>, std::vector<int>> members;
    for (std::size_t i = 0; i < n; ++i)
        if (trainingGraphViewShows(g, options.mode, static_cast<int>(i)) && v.opGroup[i] >= 0)
            members[{v.opGroup[i], isBackward(g.ops[i])}].push_back(static_cast<int>(i));
    v.nodeOfOp.assign(n, -1);
    std::map<std::pair<int, bool>, int> groupNode;
    for (std::size_t i = 0; i < n; ++i) {
        const int op = static_cast<int>(i);
        if (!trainingGraphViewShows(g, options.mode, op)) continue;
        const int grp = v.opGroup[i];
        const bool back = isBackward(g.ops[i]);
        const bool collapse = options.collapse && grp >= 0 && !options.expanded.count(grp) && members[{grp, back}].size() >= 2;
        if (!collapse) {
            v.nodeOfOp[i] = static_cast<int>(v.nodes.size());
            v.nodes.push_back({trainingGraphNodeName(g, op), {op}, grp, false});
            continue;
        }
        auto [it, fresh] = groupNode.emplace(std::make_pair(grp, back), static_cast<int>(v.nodes.size()));
        if (fresh) v.nodes.push_back({"group " + std::to_string(grp) + (back ? " backward" : " forward"), {}, grp, true});
        v.nodes[static_cast<std::size_t>(it->second)].ops.push_back(op);
        v.nodeOfOp[i] = it->second;
    }

    // Edges between different nodes, once per node pair (the first op pair met represents it).
    std::map<std::pair<int, int>, int> seen;
    for (std::size_t i = 0; i < n; ++i) {
        const int to = v.nodeOfOp[i];
        if (to < 0) continue;
        for (int in : g.ops[i].inputs) {
            const int p = g.tensor(in).producer;
            if (p < 0) continue;
            const int from = v.nodeOfOp[static_cast<std::size_t>(p)];
            if (from < 0 || from == to) continue;
            if (seen.emplace(std::make_pair(from, to), static_cast<int>(v.edges.size())).second)
                v.edges.push_back({from, to, p, static_cast<int>(i)});
        }
    }
    return v;
}

std::vector<TrainingGraphNodeClass> trainingGraphViewNodeClasses(const TrainingGraph& g, const TrainingGraphView& v)
{
    const std::vector<TrainingGraphNodeClass> perOp = trainingGraphNodeClasses(g);
    std::vector<TrainingGraphNodeClass> c(v.nodes.size(), TrainingGraphNodeClass::Pruned);
    for (std::size_t k = 0; k < v.nodes.size(); ++k) {
        const TrainingGraphViewNode& node = v.nodes[k];
        if (!node.collapsed) {
            c[k] = perOp[static_cast<std::size_t>(node.ops.front())];
            continue;
        }
        for (int op : node.ops)
            if (g.isLive(op)) {
                c[k] = isBackward(g.op(op)) ? TrainingGraphNodeClass::Backward : TrainingGraphNodeClass::Forward;
                break;
            }
    }
    return c;
}

TrainingGraphEdgeClass trainingGraphViewEdgeClass(const TrainingGraph& g, const TrainingGraphView& v, const TrainingGraphViewEdge& e)
{
    const TrainingGraphViewNode& to = v.nodes[static_cast<std::size_t>(e.to)];
    if (!to.collapsed) return trainingGraphEdgeClass(g, e.producer, e.consumer);
    // Into a group: pruned only when the whole group is.
    for (int op : to.ops)
        if (g.isLive(op)) {
            const TrainingGraphEdgeClass c = trainingGraphEdgeClass(g, e.producer, op);
            return c == TrainingGraphEdgeClass::Pruned ? TrainingGraphEdgeClass::Data : c;
        }
    return TrainingGraphEdgeClass::Pruned;
}

std::string trainingGraphViewDot(const TrainingGraph& g, const TrainingGraphView& v, const TrainingGraphDotOptions& options)
{
    const std::vector<TrainingGraphNodeClass> classes = trainingGraphViewNodeClasses(g, v);
    const std::vector<std::string> labels = trainingGraphOpLabels(g, options.stableLabels);
    std::ostringstream d;
    d << trainingGraphDotHeader(options);
    for (std::size_t k = 0; k < v.nodes.size(); ++k) {
        const TrainingGraphViewNode& node = v.nodes[k];
        std::string label, tooltip;
        if (node.collapsed) {
            const bool back = isBackward(g.op(node.ops.front()));
            // The op count is the view's, so the label (and the layout) of the whole view does not
            // depend on the scheme.
            label = v.groupNames[static_cast<std::size_t>(node.group)] + (back ? " · backward" : " · forward") + "\n" +
                    std::to_string(node.ops.size()) + " ops (click to expand)";
            tooltip = label;
        } else {
            label = labels[static_cast<std::size_t>(node.ops.front())];
            tooltip = trainingGraphOpTooltip(g, node.ops.front());
        }
        d << "  " << dotQuote(node.name) << " [label=" << dotQuote(label) << " " << (options.styles ? trainingGraphNodeAttrs(classes[k]) : "")
          << (node.collapsed ? " shape=box3d" : "") << " tooltip=" << dotQuote(tooltip) << "]\n";
    }
    for (const TrainingGraphViewEdge& e : v.edges) {
        const bool saved = g.op(e.producer).phase != Phase::Backward && g.op(e.consumer).phase == Phase::Backward;
        d << "  " << dotQuote(v.nodes[static_cast<std::size_t>(e.from)].name) << " -> " << dotQuote(v.nodes[static_cast<std::size_t>(e.to)].name)
          << (options.styles ? trainingGraphEdgeAttrs(trainingGraphViewEdgeClass(g, v, e), saved) : saved ? " [constraint=false]" : "") << "\n";
    }
    // The backward pass starts where the forward ends: its seed (d loss/d loss = 1, which reads no
    // op) is ranked below the loss, so the loss and the last layers' gradients sit together instead
    // of at opposite ends of the drawing. (Other constants stay beside their consumers.) Not in the
    // whole graph drawn op by op: the stacked passes there took 2.8x longer to lay out (5.9 s ->
    // 16.5 s for the subnet's 2,810 ops, bench_graph_layout), and that view is not read by zooming
    // on the loss.
    const bool anchor = v.options.mode != TrainingGraphViewMode::Whole || v.options.collapse;
    const int lossOp = anchor && g.loss >= 0 ? g.tensor(g.loss).producer : -1;
    const int lossNode = lossOp >= 0 ? v.nodeOfOp[static_cast<std::size_t>(lossOp)] : -1;
    if (lossNode >= 0) {
        std::set<int> sources;
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            const int node = v.nodeOfOp[i];
            if (node >= 0 && node != lossNode && g.ops[i].role == OpRole::Seed) sources.insert(node);
        }
        for (int node : sources)
            d << "  " << dotQuote(v.nodes[static_cast<std::size_t>(lossNode)].name) << " -> " << dotQuote(v.nodes[static_cast<std::size_t>(node)].name)
              << " [style=invis]\n";
    }
    d << "}\n";
    return d.str();
}

}  // namespace tinyscope
