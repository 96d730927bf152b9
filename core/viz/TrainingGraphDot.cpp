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

bool isLive(const TrainingGraph& g, int op) { return op < static_cast<int>(g.live.size()) && g.live[static_cast<std::size_t>(op)]; }

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
        c[i] = !isLive(g, static_cast<int>(i))          ? TrainingGraphNodeClass::Pruned
               : leaf[static_cast<std::size_t>(o.output)] ? TrainingGraphNodeClass::GradientOutput
               : o.phase == Phase::Forward               ? TrainingGraphNodeClass::Forward
               : o.phase == Phase::Loss                  ? TrainingGraphNodeClass::Loss
                                                         : TrainingGraphNodeClass::Backward;
    }
    return c;
}

TrainingGraphEdgeClass trainingGraphEdgeClass(const TrainingGraph& g, int producer, int consumer)
{
    if (!isLive(g, consumer)) return TrainingGraphEdgeClass::Pruned;
    return isSavedEdge(g, producer, consumer) ? TrainingGraphEdgeClass::Saved : TrainingGraphEdgeClass::Data;
}

const TrainingGraphNodeStyle& trainingGraphNodeStyle(TrainingGraphNodeClass c) { return nodeStyles()[static_cast<int>(c)]; }
const TrainingGraphEdgeStyle& trainingGraphEdgeStyle(TrainingGraphEdgeClass c) { return edgeStyles()[static_cast<int>(c)]; }

std::string trainingGraphDot(const TrainingGraph& g, const TrainingGraphDotOptions& options)
{
    std::vector<const GraphOutput*> outputOf(g.tensors.size(), nullptr);
    for (const GraphOutput& o : g.outputs) outputOf[static_cast<std::size_t>(o.tensor)] = &o;
    // Stable labels: the parameter whose gradient a tensor holds, output or not.
    std::vector<std::string> gradientOf(g.tensors.size());
    if (options.stableLabels) {
        for (std::size_t p = 0; p < g.parameter_gradient.size(); ++p)
            if (g.parameter_gradient[p] >= 0) gradientOf[static_cast<std::size_t>(g.parameter_gradient[p])] = g.tensors[p].name;
        for (const GraphOutput& o : g.outputs) gradientOf[static_cast<std::size_t>(o.tensor)] = o.info;
    }
    const std::vector<TrainingGraphNodeClass> classes = trainingGraphNodeClasses(g);

    std::ostringstream d;
    d << "digraph training_graph {\n"
      << "  graph [rankdir=" << options.rankdir << " nodesep=0.18 ranksep=0.32 fontname=\"DejaVu Sans\" fontsize=14 labelloc=t"
      // Bounded crossing minimisation: a thousand-op graph lays out in seconds, not minutes.
      << " mclimit=0.05 nslimit=1 nslimit1=1 remincross=false searchsize=5";
    if (!options.title.empty()) d << " label=" << dotQuote(options.title);
    d << "]\n"
      << "  node [fontname=\"DejaVu Sans\" fontsize=10 shape=box style=\"rounded,filled\" height=0.3 margin=\"0.08,0.03\"]\n"
      << "  edge [arrowsize=0.5 color=\"" << paletteColour("graph.edge.data") << "\"]\n";
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const int op = static_cast<int>(i);
        const Op& o = g.op(op);
        if (!isLive(g, op) && !options.showPruned) continue;
        const Tensor& out = g.tensor(o.output);
        const GraphOutput* leaf = outputOf[static_cast<std::size_t>(o.output)];
        std::string label = std::string(opTypeName(o.kind)) + "\n" + shapeText(out.shape) + " " + dtypeName(out.dtype);
        if (options.stableLabels) {
            const std::string& param = gradientOf[static_cast<std::size_t>(o.output)];
            if (!param.empty()) label += "\n" + param;
            else if (leaf) label += "\n" + leaf->info;
        } else if (leaf) {
            label += "\n" + leaf->info;
        }
        std::string tooltip = trainingGraphNodeName(g, op) + " (" + opRoleName(o.role) + ")\nattrs " + o.attrs.dump() +
                              "\nout " + shapeText(out.shape) + " " + dtypeName(out.dtype);
        for (int in : o.inputs) {
            const Tensor& t = g.tensor(in);
            tooltip += "\nin  " + (t.kind == TensorKind::Parameter ? t.name
                                   : t.kind == TensorKind::Constant ? "constant " + std::to_string(t.value)
                                                                    : trainingGraphNodeName(g, t.producer)) +
                       " " + shapeText(t.shape) + " " + dtypeName(t.dtype);
        }
        d << "  " << dotQuote(trainingGraphNodeName(g, op)) << " [label=" << dotQuote(label) << " "
          << nodeAttrs(trainingGraphNodeStyle(classes[i])) << " tooltip=" << dotQuote(tooltip) << "]\n";
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const int op = static_cast<int>(i);
        if (!isLive(g, op) && !options.showPruned) continue;
        for (int in : g.op(op).inputs) {
            const int p = g.tensor(in).producer;
            if (p < 0) continue;
            d << "  " << dotQuote(trainingGraphNodeName(g, p)) << " -> " << dotQuote(trainingGraphNodeName(g, op));
            const bool saved = isSavedEdge(g, p, op);
            const TrainingGraphEdgeClass ec = trainingGraphEdgeClass(g, p, op);
            if (ec != TrainingGraphEdgeClass::Data || saved) {
                const TrainingGraphEdgeStyle& es = trainingGraphEdgeStyle(ec);
                d << " [color=\"" << es.color << "\"" << (es.dashed ? " style=dashed" : "") << (saved ? " constraint=false" : "") << "]";
            }
            d << "\n";
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
