// One toggle in the Training-inspector panel, end to end, on mcunet-5fps with the published
// "49kb" scheme (1,116 ops laid out, the whole graph in view — the most items to repaint):
//  * a bias toggle through the panel's table model: undo command → ledger → findings → table
//    → totals → chart → re-pruned graph (selectOutputs) → recoloured nodes and edges; then the
//    same followed by a synchronous repaint of the whole window (what the user waits for);
//  * its parts, timed alone;
//  * baseline from the same run: what a toggle would cost without the recolour path — rebuild
//    the training graph and lay it out again with Graphviz (the panel does this only when a
//    weight ratio changes the graph's ops).
// Target: a toggle within one frame (16 ms). Offscreen platform, one window of 1600×1000.
#include "BenchTiming.h"
#include "AppState.h"
#include "MainWindow.h"
#include "SvgGraphView.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"
#include "TrainingMemoryChart.h"

#include "graph/Autodiff.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTabWidget>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace tinyscope;
using namespace tinyscope::ui;

namespace {

struct Stats {
    double median = 0, p90 = 0, max = 0;
};

Stats timeMs(int n, const std::function<void(int)>& f)
{
    std::vector<double> t;
    for (int i = 0; i < n; ++i) {
        QElapsedTimer e;
        e.start();
        f(i);
        t.push_back(static_cast<double>(e.nsecsElapsed()) / 1e6);
    }
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t[std::min(t.size() - 1, t.size() * 9 / 10)], t.back()};
}

void print(const char* what, const Stats& s)
{
    std::printf("  %-58s median %9.3f ms   p90 %9.3f ms   max %9.3f ms\n", what, s.median, s.p90, s.max);
}

}  // namespace

int main(int argc, char** argv)
{
    tinyscope::bench::printMachine();
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    const int n = argc > 1 ? std::atoi(argv[1]) : 60;
    QApplication app(argc, argv);
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    TrainingInspectorPanel* panel = w.trainingInspectorPanel();
    w.tabs()->setCurrentWidget(panel);
    panel->selectModel(QStringLiteral("mcunet-5fps"));
    panel->loadPublishedScheme(QStringLiteral("49kb"));
    if (!panel->waitForGraph(600000)) {
        std::fprintf(stderr, "layout did not finish\n");
        return 1;
    }
    QApplication::processEvents();
    TrainingLayerModel* m = panel->layerModel();
    TrainingGraphPane* pane = panel->graphPane();
    pane->view()->fitAll();
    const Network& net = m->network();
    std::printf("mcunet-5fps, published 49kb; graph %zu ops laid out; %d toggles per row\n", pane->graph().ops.size(), n);

    // Conv 22 is the first updated conv: toggling its bias moves where back-propagation stops
    // (dozens of ops change colour); conv 41 is the last backbone conv (a handful change).
    auto toggle = [&](int row, int i) {
        m->setData(m->index(row, TrainingLayerModel::Bias), i % 2 ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
    };
    int pendingLayouts = 0;
    const Stats t22 = timeMs(n, [&](int i) {
        toggle(22, i);
        pendingLayouts += pane->layoutPending();
    });
    const Stats t41 = timeMs(n, [&](int i) { toggle(41, i); });
    const Stats t22paint = timeMs(n, [&](int i) {
        toggle(22, i);
        w.repaint();   // synchronous: table, totals, chart and the graph view in full
    });
    const Stats paintOnly = timeMs(n, [&](int) { w.repaint(); });

    // Parts, alone.
    const TrainingMemoryModel core(net);
    ResolvedScheme a = m->scheme(), b = m->scheme();
    b.convs[22].bias = !b.convs[22].bias;
    const Stats ledger = timeMs(n * 10, [&](int i) { (void)core.ledger(i % 2 ? a : b); });
    const MemoryLedger la = core.ledger(a), lb = core.ledger(b);
    const Stats chart = timeMs(n, [&](int i) { panel->chart()->setLedger(i % 2 ? la : lb, 256); });
    const Stats recolour = timeMs(n, [&](int i) {
        selectOutputs(pane->graph(), net, i % 2 ? a : b);
        pane->outputsChanged();
    });

    // Baseline: rebuild + relayout (Graphviz) for the same scheme.
    const int nBase = argc > 2 ? std::atoi(argv[2]) : 3;
    const Stats rebuild = timeMs(nBase, [&](int i) {
        pane->setGraph(buildTrainingGraph(net, i % 2 ? a : b, m->mode()), m->networkPtr());
        pane->waitForLayout(600000);
    });

    std::printf("one toggle through the panel's table model (state update, no paint):\n");
    print("bias of conv 22 (first updated conv)", t22);
    print("bias of conv 41 (last backbone conv)", t41);
    std::printf("one toggle + synchronous repaint of the 1600x1000 window:\n");
    print("bias of conv 22, then repaint", t22paint);
    print("repaint alone (nothing changed)", paintOnly);
    std::printf("parts:\n");
    print("memory ledger (core)", ledger);
    print("chart update (4 bar sets + running total)", chart);
    print("selectOutputs + recolour of the laid-out graph", recolour);
    std::printf("baseline (same run):\n");
    print("rebuild training graph + Graphviz layout + scene", rebuild);
    std::printf("toggle with repaint is %.0fx faster than rebuild + relayout (medians); layouts started by bias toggles: %d\n",
                rebuild.median / t22paint.median, pendingLayouts);
    return 0;
}
