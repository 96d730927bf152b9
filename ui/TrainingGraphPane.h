#pragma once
// A view of any TrainingGraph (built from a Network under a scheme, or read from a file): the
// forward + backward graph laid out by Graphviz, every op shown — forward, loss, backward,
// gradient outputs and the ops the scheme prunes, distinguished by colour and a legend — with
// pan/zoom, search by op / layer / parameter name, and a side panel for the clicked op.
//
// Layout (0.4–4 s for the training graphs of the zoo) runs off the GUI thread whenever the
// graph's ops change (setGraph) and the pane is visible (or waited for); meanwhile the old picture stays, marked "laying out…", and a
// newer graph supersedes a running layout. When only the outputs change (a bias toggle re-runs
// dead-code elimination on the same ops, see selectOutputs), outputsChanged() recolours the
// laid-out nodes and edges in place — the layout does not depend on the outputs because every
// parameter-gradient op is labelled whether or not it is kept (TrainingGraphDot's stableLabels).
#include "graph/TrainingGraph.h"
#include "viz/TrainingGraphDot.h"

#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

class QLabel;
class QProgressBar;
class QPushButton;

namespace tinyscope {
struct Network;
}

namespace tinyscope::ui {

class GraphFindBar;
class JobRunner;

class NodeInspector;
class SvgGraphView;

class TrainingGraphPane : public QWidget {
    Q_OBJECT
public:
    explicit TrainingGraphPane(QWidget* parent = nullptr);
    ~TrainingGraphPane() override;

    // A graph with new ops: lays it out off the GUI thread. `net` (optional) names layers.
    void setGraph(TrainingGraph g, std::shared_ptr<const Network> net = {});
    // The caller changed graph().live / outputs / order only: recolour now.
    void outputsChanged();
    void clearGraph(const QString& message);
    TrainingGraph& graph() { return graph_; }
    const TrainingGraph& graph() const { return graph_; }
    bool hasGraph() const { return !graph_.ops.empty(); }

    bool layoutPending() const { return running_ || !viewCurrent_; }
    bool waitForLayout(int timeoutMs);     // processes events until the view shows graph()
    double lastLayoutSeconds() const { return lastLayoutSeconds_; }

    // Search: selects and centres the next op whose name, layer or parameters contain `text`
    // (case-insensitive); returns false when none does.
    bool find(const QString& text);
    bool selectOp(int op);
    bool focusOp(int op, double minScale);   // select, zoomed in to at least minScale
    int selectedOp() const;

    // Writes the graph as .svg / .png (Graphviz) or .dot, with the standard colours, title and
    // legend, atomically. Runs in the calling thread (the GUI calls it through exportGraph).
    static void writeGraphFile(const TrainingGraph& g, const std::string& path, const std::string& title);
    static std::string renderGraphFile(const TrainingGraph& g, const std::string& path, const std::string& title);
    // The same off the GUI thread with progress and Cancel; reports through exportFinished.
    void exportGraph(const QString& path, const QString& title);
    bool waitForExport(int timeoutMs);

    SvgGraphView* view() const { return view_; }
    NodeInspector* inspector() const { return inspector_; }
    QString summaryText() const;

Q_SIGNALS:
    void layoutFinished();
    void opSelected(int op);
    void exportFinished(bool ok, const QString& message);

protected:
    void showEvent(QShowEvent* e) override;

private:
    void startLayout();
    void restyle();
    void refreshBusy();
    void updateSummary();
    QString searchText(int op) const;

    TrainingGraph graph_;
    std::shared_ptr<const Network> net_;
    std::vector<QString> names_;                        // per op: the DOT node name
    std::vector<TrainingGraphNodeClass> shown_;         // per op: the class the view shows
    int generation_ = 0;                                // bumped by setGraph
    bool running_ = false;
    bool waiting_ = false;                              // waitForLayout is running
    bool viewCurrent_ = true;                           // the view shows a layout of graph_'s ops
    double lastLayoutSeconds_ = 0;
    bool exporting_ = false;
    JobRunner* layoutJobs_;
    JobRunner* exportJobs_;
    QString layoutNote_, exportNote_;

    SvgGraphView* view_;
    NodeInspector* inspector_;
    GraphFindBar* findBar_;
    QLabel* summary_;
    QProgressBar* busy_;
    QLabel* busyText_;
    QPushButton* cancel_;
};

}  // namespace tinyscope::ui
