#include "viz/TrainingGraphDot.h"

#include "viz/GraphvizRenderer.h"
#include "viz/Palette.h"

#include <sstream>

namespace tinyscope {

namespace {

const char* colour(std::string_view role) { return paletteColour(role).c_str(); }

const TrainingGraphNodeStyle* nodeStyles()
{
    static const TrainingGraphNodeStyle styles[] = {
        {colour("graph.forward.fill"), colour("graph.forward.border"), colour("graph.forward.text"), false, 1.0, "forward (int8)"},
        {colour("graph.loss.fill"), colour("graph.loss.border"), colour("graph.loss.text"), false, 1.0, "loss"},
        {colour("graph.backward.fill"), colour("graph.backward.border"), colour("graph.backward.text"), false, 1.0, "backward (float32)"},
        {colour("graph.gradient.fill"), colour("graph.gradient.border"), colour("graph.gradient.text"), false, 2.2, "gradient output"},
        {colour("graph.pruned.fill"), colour("graph.pruned.border"), colour("graph.pruned.text"), true, 1.0, "pruned by the scheme"},
    };
    return styles;
}
const TrainingGraphEdgeStyle* edgeStyles()
{
    static const TrainingGraphEdgeStyle styles[] = {
        {colour("graph.edge.data"), false}, {colour("graph.edge.saved"), false}, {colour("graph.edge.pruned"), true}};
    return styles;
}

std::string shapeText(const TensorShape& s)
{
    if (s.empty()) return "[]";
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
    return t + "]";
}

// A forward tensor read in the backward pass: drawn, but not used for ranking, so the backward
// graph is laid out by its own dependencies (and much faster).
bool isSavedEdge(const TrainingGraph& g, int producer, int consumer)
{
    return g.op(producer).phase != Phase::Backward && g.op(consumer).phase == Phase::Backward;
}

std::string nodeAttrs(const TrainingGraphNodeStyle& st)
{
    std::string a = "fillcolor=\"" + std::string(st.fill) + "\" color=\"" + st.border + "\" fontcolor=\"" + st.font + "\"";
    if (st.penwidth != 1.0) a += " penwidth=" + std::to_string(st.penwidth).substr(0, 3);
    if (st.dashed) a += " style=\"rounded,filled,dashed\"";
    return a;
}

}  // namespace

std::string trainingGraphNodeName(const TrainingGraph& g, int op)
{
    return std::string(opTypeName(g.op(op).kind)) + "#" + std::to_string(op);
}

std::vector<TrainingGraphNodeClass> trainingGraphNodeClasses(const TrainingGraph& g)
{
    std::vector<char> leaf(g.tensors.size(), 0);
    for (const GraphOutput& o : g.outputs)
        if (o.kind != GradientKind::Loss) leaf[static_cast<std::size_t>(o.tensor)] = 1;
    std::vector<TrainingGraphNodeClass> c(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& o = g.ops[i];
        c[i] = !g.isLive(static_cast<int>(i))          ? TrainingGraphNodeClass::Pruned
               : leaf[static_cast<std::size_t>(o.output)] ? TrainingGraphNodeClass::GradientOutput
               : o.phase == Phase::Forward               ? TrainingGraphNodeClass::Forward
               : o.phase == Phase::Loss                  ? TrainingGraphNodeClass::Loss
                                                         : TrainingGraphNodeClass::Backward;
    }
    return c;
}

TrainingGraphEdgeClass trainingGraphEdgeClass(const TrainingGraph& g, int producer, int consumer)
{
    if (!g.isLive(consumer)) return TrainingGraphEdgeClass::Pruned;
    return isSavedEdge(g, producer, consumer) ? TrainingGraphEdgeClass::Saved : TrainingGraphEdgeClass::Data;
}

const TrainingGraphNodeStyle& trainingGraphNodeStyle(TrainingGraphNodeClass c) { return nodeStyles()[static_cast<int>(c)]; }
const TrainingGraphEdgeStyle& trainingGraphEdgeStyle(TrainingGraphEdgeClass c) { return edgeStyles()[static_cast<int>(c)]; }

std::vector<std::string> trainingGraphOpLabels(const TrainingGraph& g, bool stableLabels)
{
    std::vector<const GraphOutput*> outputOf(g.tensors.size(), nullptr);
    for (const GraphOutput& o : g.outputs) outputOf[static_cast<std::size_t>(o.tensor)] = &o;
    // Stable labels: the parameter whose gradient a tensor holds, output or not.
    std::vector<std::string> gradientOf(g.tensors.size());
    if (stableLabels) {
        for (std::size_t p = 0; p < g.parameter_gradient.size(); ++p)
            if (g.parameter_gradient[p] >= 0) gradientOf[static_cast<std::size_t>(g.parameter_gradient[p])] = g.tensors[p].name;
        for (const GraphOutput& o : g.outputs) gradientOf[static_cast<std::size_t>(o.tensor)] = o.info;
    }
    std::vector<std::string> labels(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& o = g.ops[i];
        const Tensor& out = g.tensor(o.output);
        const GraphOutput* leaf = outputOf[static_cast<std::size_t>(o.output)];
        std::string label = std::string(opTypeName(o.kind)) + "\n" + shapeText(out.shape) + " " + dtypeName(out.dtype);
        if (stableLabels) {
            const std::string& param = gradientOf[static_cast<std::size_t>(o.output)];
            if (!param.empty()) label += "\n" + param;
            else if (leaf) label += "\n" + leaf->info;
        } else if (leaf) {
            label += "\n" + leaf->info;
        }
        labels[i] = std::move(label);
    }
    return labels;
}

std::string trainingGraphOpTooltip(const TrainingGraph& g, int op)
{
    const Op& o = g.op(op);
    const Tensor& out = g.tensor(o.output);
    std::string tooltip = trainingGraphNodeName(g, op) + " (" + opRoleName(o.role) + ")\nattrs " + o.attrs.dump() +
                          "\nout " + shapeText(out.shape) + " " + dtypeName(out.dtype);
    for (int in : o.inputs) {
        const Tensor& t = g.tensor(in);
        tooltip += "\nin  " + (t.kind == TensorKind::Parameter ? t.name
                               : t.kind == TensorKind::Constant ? "constant " + std::to_string(t.value)
                                                                : trainingGraphNodeName(g, t.producer)) +
                   " " + shapeText(t.shape) + " " + dtypeName(t.dtype);
    }
    return tooltip;
}

std::string trainingGraphNodeAttrs(TrainingGraphNodeClass c) { return nodeAttrs(trainingGraphNodeStyle(c)); }

std::string trainingGraphDotHeader(const TrainingGraphDotOptions& options)
{
    std::ostringstream d;
    d << "digraph training_graph {\n"
      << "  graph [rankdir=" << options.rankdir << " nodesep=0.18 ranksep=0.32 fontname=\"DejaVu Sans\" fontsize=14 labelloc=t";
    if (!options.layoutAttrs.empty()) d << " " << options.layoutAttrs;
    if (!options.title.empty()) d << " label=" << dotQuote(options.title);
    d << "]\n"
      << "  node [fontname=\"DejaVu Sans\" fontsize=10 shape=box style=\"rounded,filled\" height=0.3 margin=\"0.08,0.03\"]\n"
      << "  edge [arrowsize=0.5 color=\"" << paletteColour("graph.edge.data") << "\"]\n";
    return d.str();
}

std::string trainingGraphEdgeAttrs(TrainingGraphEdgeClass ec, bool saved)
{
    if (ec == TrainingGraphEdgeClass::Data && !saved) return {};
    const TrainingGraphEdgeStyle& es = trainingGraphEdgeStyle(ec);
    return std::string(" [color=\"") + es.color + "\"" + (es.dashed ? " style=dashed" : "") + (saved ? " constraint=false" : "") + "]";
}

std::string trainingGraphDot(const TrainingGraph& g, const TrainingGraphDotOptions& options)
{
    const std::vector<TrainingGraphNodeClass> classes = trainingGraphNodeClasses(g);
    const std::vector<std::string> labels = trainingGraphOpLabels(g, options.stableLabels);

    std::ostringstream d;
    d << trainingGraphDotHeader(options);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const int op = static_cast<int>(i);
        if (!g.isLive(op) && !options.showPruned) continue;
        d << "  " << dotQuote(trainingGraphNodeName(g, op)) << " [label=" << dotQuote(labels[i]) << " "
          << trainingGraphNodeAttrs(classes[i]) << " tooltip=" << dotQuote(trainingGraphOpTooltip(g, op)) << "]\n";
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const int op = static_cast<int>(i);
        if (!g.isLive(op) && !options.showPruned) continue;
        for (int in : g.op(op).inputs) {
            const int p = g.tensor(in).producer;
            if (p < 0) continue;
            d << "  " << dotQuote(trainingGraphNodeName(g, p)) << " -> " << dotQuote(trainingGraphNodeName(g, op))
              << trainingGraphEdgeAttrs(trainingGraphEdgeClass(g, p, op), isSavedEdge(g, p, op)) << "\n";
        }
    }
    if (options.legend) {
        d << "  subgraph cluster_legend {\n    label=\"legend\" fontsize=11 color=\"" << paletteColour("graph.legend") << "\" style=rounded\n";
        std::string prev;
        for (TrainingGraphNodeClass c : {TrainingGraphNodeClass::Forward, TrainingGraphNodeClass::Loss, TrainingGraphNodeClass::Backward,
                                         TrainingGraphNodeClass::GradientOutput, TrainingGraphNodeClass::Pruned}) {
            const TrainingGraphNodeStyle& st = trainingGraphNodeStyle(c);
            const std::string id = std::string("legend: ") + st.legend;
            d << "    " << dotQuote(id) << " [label=" << dotQuote(st.legend) << " " << nodeAttrs(st) << "]\n";
            if (!prev.empty()) d << "    " << dotQuote(prev) << " -> " << dotQuote(id) << " [style=invis]\n";
            prev = id;
        }
        d << "  }\n";
    }
    d << "}\n";
    return d.str();
}

}  // namespace tinyscope
