#include "viz/TrainingGraphDot.h"

#include "viz/GraphvizRenderer.h"

#include <sstream>

namespace tinyscope {

namespace {

struct Style {
    const char* fill;
    const char* border;
    const char* font;
    const char* extra;
};

const Style kForward{"#d6e6f5", "#3d78b5", "#1f2d3d", ""};
const Style kLoss{"#e4dcf1", "#6a4ea3", "#2d2140", ""};
const Style kBackward{"#fde3c8", "#d9822b", "#3d2b16", ""};
const Style kLeaf{"#d5ecd0", "#3f8f35", "#1d3a19", " penwidth=2.2"};
const Style kPruned{"#f4f4f4", "#b9b9b9", "#9a9a9a", " style=\"rounded,filled,dashed\""};

std::string shapeText(const TensorShape& s)
{
    if (s.empty()) return "[]";
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
    return t + "]";
}

}  // namespace

std::string trainingGraphNodeName(const TrainingGraph& g, int op)
{
    return std::string(opTypeName(g.op(op).kind)) + "#" + std::to_string(op);
}

std::string trainingGraphDot(const TrainingGraph& g, const TrainingGraphDotOptions& options)
{
    std::vector<const GraphOutput*> outputOf(g.tensors.size(), nullptr);
    for (const GraphOutput& o : g.outputs) outputOf[static_cast<std::size_t>(o.tensor)] = &o;
    auto live = [&](int op) { return op < static_cast<int>(g.live.size()) && g.live[static_cast<std::size_t>(op)]; };

    std::ostringstream d;
    d << "digraph training_graph {\n"
      << "  graph [rankdir=" << options.rankdir << " nodesep=0.18 ranksep=0.32 fontname=\"DejaVu Sans\" fontsize=14 labelloc=t"
      // Bounded crossing minimisation: a thousand-op graph lays out in seconds, not minutes.
      << " mclimit=0.05 nslimit=1 nslimit1=1 remincross=false searchsize=5";
    if (!options.title.empty()) d << " label=" << dotQuote(options.title);
    d << "]\n"
      << "  node [fontname=\"DejaVu Sans\" fontsize=10 shape=box style=\"rounded,filled\" height=0.3 margin=\"0.08,0.03\"]\n"
      << "  edge [arrowsize=0.5 color=\"#555555\"]\n";
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const int op = static_cast<int>(i);
        const Op& o = g.op(op);
        if (!live(op) && !options.showPruned) continue;
        const Tensor& out = g.tensor(o.output);
        const GraphOutput* leaf = outputOf[static_cast<std::size_t>(o.output)];
        const Style* st = !live(op) ? &kPruned
                          : leaf && leaf->kind != GradientKind::Loss ? &kLeaf
                          : o.phase == Phase::Forward              ? &kForward
                          : o.phase == Phase::Loss                 ? &kLoss
                                                                   : &kBackward;
        std::string label = std::string(opTypeName(o.kind)) + "\n" + shapeText(out.shape) + " " + dtypeName(out.dtype);
        if (leaf) label += "\n" + leaf->info;
        std::string tooltip = trainingGraphNodeName(g, op) + " (" + opRoleName(o.role) + ")\nattrs " + o.attrs.dump() +
                              "\nout " + shapeText(out.shape) + " " + dtypeName(out.dtype);
        for (int in : o.inputs) {
            const Tensor& t = g.tensor(in);
            tooltip += "\nin  " + (t.kind == TensorKind::Parameter ? t.name
                                   : t.kind == TensorKind::Constant ? "constant " + std::to_string(t.value)
                                                                    : trainingGraphNodeName(g, t.producer)) +
                       " " + shapeText(t.shape) + " " + dtypeName(t.dtype);
        }
        d << "  " << dotQuote(trainingGraphNodeName(g, op)) << " [label=" << dotQuote(label) << " fillcolor=\"" << st->fill
          << "\" color=\"" << st->border << "\" fontcolor=\"" << st->font << "\"" << st->extra
          << " tooltip=" << dotQuote(tooltip) << "]\n";
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const int op = static_cast<int>(i);
        if (!live(op) && !options.showPruned) continue;
        for (int in : g.op(op).inputs) {
            const int p = g.tensor(in).producer;
            if (p < 0) continue;
            d << "  " << dotQuote(trainingGraphNodeName(g, p)) << " -> " << dotQuote(trainingGraphNodeName(g, op));
            // A saved forward tensor read in the backward pass: drawn, but not used for ranking,
            // so the backward graph is laid out by its own dependencies (and much faster).
            const bool saved = g.op(p).phase != Phase::Backward && g.op(op).phase == Phase::Backward;
            if (!live(op)) d << " [color=\"#c8c8c8\" style=dashed" << (saved ? " constraint=false" : "") << "]";
            else if (saved) d << " [color=\"#7a9cc6\" constraint=false]";
            d << "\n";
        }
    }
    if (options.legend) {
        d << "  subgraph cluster_legend {\n    label=\"legend\" fontsize=11 color=\"#bbbbbb\" style=rounded\n";
        const std::pair<const char*, const Style*> items[] = {{"forward (int8)", &kForward},
                                                              {"loss", &kLoss},
                                                              {"backward (float32)", &kBackward},
                                                              {"gradient output", &kLeaf},
                                                              {"pruned by the scheme", &kPruned}};
        std::string prev;
        for (const auto& [text, st] : items) {
            const std::string id = std::string("legend: ") + text;
            d << "    " << dotQuote(id) << " [label=" << dotQuote(text) << " fillcolor=\"" << st->fill << "\" color=\""
              << st->border << "\" fontcolor=\"" << st->font << "\"" << st->extra << "]\n";
            if (!prev.empty()) d << "    " << dotQuote(prev) << " -> " << dotQuote(id) << " [style=invis]\n";
            prev = id;
        }
        d << "  }\n";
    }
    d << "}\n";
    return d.str();
}

}  // namespace tinyscope
