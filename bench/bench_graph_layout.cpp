// Training-graph layout (issue 22): Graphviz layout time of the Training inspector's graph views
// for mcunet-5fps (49kb), proxyless-w0.3 and the design-space subnet (lab max config), correct
// autodiff as the panel starts, against the baseline of the same run — the whole graph with the
// layout options the pane used before (TrainingGraphDot's kTrainingGraphLayoutAttrs).
//
//   bench_graph_layout [--skip-baseline] [--attrs "graphviz graph attributes"] [--model NAME]
//
// --attrs replaces the fast options (to try others); --skip-baseline drops the slow baseline
// (108 s for the subnet).
#include "BenchTiming.h"
#include "graph/Autodiff.h"
#include "graph/PublishedSchemes.h"
#include "space/ArchSampler.h"
#include "viz/GraphvizRenderer.h"
#include "viz/TrainingGraphView.h"
#include "workspace/Workspace.h"
#include "zoo/Network.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

// CPU seconds of the layout (Graphviz runs on this one thread): on a shared machine the wall
// time also counts other jobs' turns.
double layoutSeconds(const std::string& dot)
{
    const std::clock_t t0 = std::clock();
    const std::string svg = renderDotToSvg(dot);
    const double s = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
    return svg.empty() ? -s : s;
}

struct Case {
    std::string label;
    Network net;
    ResolvedScheme scheme;
    ResolvedScheme biasOnly12;
};

}  // namespace

int main(int argc, char** argv)
{
    bench::printMachine();
    bool baseline = true;
    std::string fast = kTrainingGraphFastLayoutAttrs;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--skip-baseline")) baseline = false;
        else if (!std::strcmp(argv[i], "--attrs") && i + 1 < argc) fast = argv[++i];
        else if (!std::strcmp(argv[i], "--model") && i + 1 < argc) only = argv[++i];
    }
    std::vector<Case> cases;
    for (const char* name : {"mcunet-5fps", "proxyless-w0.3"}) {
        Network net = zooModel(name);
        const std::vector<PublishedScheme> pub = publishedSchemesFor(net.name);
        const ResolvedScheme s = pub.empty() ? SparseScheme::biasOnly(net.numBackboneConvs() / 3).resolve(net) : pub.front().scheme.resolve(net);
        const ResolvedScheme b = SparseScheme::biasOnly(12).resolve(net);
        cases.push_back({std::string(name) + (pub.empty() ? "" : " " + pub.front().name), std::move(net), s, b});
    }
    {
        const Workspace w = shippedWorkspace(shippedWorkspaceNames().front());
        Network net = networkFromSubnet(w.space, ArchSampler(w.space).labMaxConfig(w.space.resolutions.front()), "design-space subnet");
        const ResolvedScheme s = SparseScheme::biasOnly(net.numBackboneConvs() / 3).resolve(net);
        const ResolvedScheme b = SparseScheme::biasOnly(12).resolve(net);
        cases.push_back({"design-space subnet (" + w.name + ", lab max)", std::move(net), s, b});
    }
    std::printf("Graphviz dot layout to SVG, CPU seconds, once each (Graphviz is serialised; 1 thread)\n");
    std::printf("fast options: %s\nbaseline options: %s\n\n", fast.c_str(), kTrainingGraphLayoutAttrs);
    for (const Case& c : cases) {
        if (!only.empty() && c.label.find(only) == std::string::npos) continue;
        TrainingGraph g = buildTrainingGraph(c.net, c.scheme, AutodiffMode::Correct);
        std::printf("%s: %zu ops, %d kept (starting scheme)\n", c.label.c_str(), g.ops.size(), g.liveOps());
        TrainingGraphDotOptions old;
        old.legend = false;
        old.stableLabels = true;
        TrainingGraphDotOptions opt = old;
        opt.layoutAttrs = fast;
        opt.styles = false;   // as the pane lays out
        auto viewDot = [&](TrainingGraphViewMode m, bool collapse, const TrainingGraphDotOptions& o) {
            TrainingGraphViewOptions vo;
            vo.mode = m;
            vo.collapse = collapse;
            const TrainingGraphView v = buildTrainingGraphView(g, &c.net, vo);
            return std::make_pair(trainingGraphViewDot(g, v, o), static_cast<int>(v.nodes.size()));
        };
        double base = 0;
        if (baseline) {
            base = layoutSeconds(trainingGraphDot(g, old));
            std::printf("  baseline: whole graph, old options          %7.2f s\n", base);
        }
        auto row = [&](const char* what, TrainingGraphViewMode m, bool collapse) {
            const auto [dot, nodes] = viewDot(m, collapse, opt);
            const double s = layoutSeconds(dot);
            std::printf("  %-40s %5d nodes %7.2f s", what, nodes, s);
            if (base > 0) std::printf("   (%.0fx faster than the baseline)", base / s);
            std::printf("\n");
            return dot;
        };
        row("whole graph, fast options", TrainingGraphViewMode::Whole, false);
        const std::string collapsedDot = row("whole graph, collapsed per block", TrainingGraphViewMode::Whole, true);
        row("kept ops only", TrainingGraphViewMode::Kept, false);
        row("kept ops only, collapsed", TrainingGraphViewMode::Kept, true);
        row("backward only", TrainingGraphViewMode::Backward, false);
        selectOutputs(g, c.net, c.biasOnly12);
        row("kept ops only, bias-only:12", TrainingGraphViewMode::Kept, false);
        row("kept ops only, bias-only:12, collapsed", TrainingGraphViewMode::Kept, true);
        // A cached layout: the pane keys its cache by the view's DOT text; a hit costs building
        // the view, its DOT and a hash lookup.
        std::unordered_map<std::string, int> cache{{collapsedDot, 1}};
        const double hitUs = bench::timeUs(20, [&](int) { (void)cache.count(viewDot(TrainingGraphViewMode::Whole, true, opt).first); });
        std::printf("  cached layout (view + DOT + lookup)         %7.2f ms\n\n", hitUs / 1000);
    }
    return 0;
}
