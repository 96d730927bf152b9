#pragma once
// A view of any TrainingGraph (built from a Network under a scheme, or read from a file): the
// forward + backward graph laid out by Graphviz — forward, loss, backward, gradient outputs and
// the ops the scheme prunes, distinguished by colour and a legend — with pan/zoom, search by op /
// layer / parameter name, and a side panel for the clicked op.
//
// Teaching views (issue 22, viz/TrainingGraphView.h): whole graph / kept ops only / backward
// only, optionally collapsed per block (click a block to expand it). The legend shows the classes
// the view can draw. A new model (or view) is framed on the loss and the gradient outputs.
//
// Layout runs off the GUI thread whenever the drawn nodes change (setGraph, another view, a bias
// toggle in the kept / backward views) and the pane is visible (or waited for); meanwhile the old
// picture stays, marked "laying out…", and a newer request supersedes a running layout. Layouts
// are cached by their DOT text (which carries no colours), so returning to a scheme, view or model
// shows at once. When only the outputs change and the view draws the same nodes (the whole graph:
// every parameter-gradient op is labelled whether or not it is kept, TrainingGraphDot's
// stableLabels), outputsChanged() recolours in place. Either way the ops that appeared or changed
// with the edit are outlined, and the status line counts those that disappeared.
#include "graph/TrainingGraph.h"
#include "viz/TrainingGraphDot.h"
#include "viz/TrainingGraphView.h"

#include <QHash>
#include <QWidget>

#include <atomic>
#include <list>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace tinyscope {
struct Network;
}

namespace tinyscope::ui {

class GraphFindBar;
class JobRunner;
struct GvLayout;

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

    // Teaching views.
    void setViewMode(TrainingGraphViewMode mode);
    TrainingGraphViewMode viewMode() const { return viewOptions_.mode; }
    void setCollapsed(bool collapse);
    bool collapsed() const { return viewOptions_.collapse; }
    bool toggleGroup(int group);                 // expand a collapsed block, or collapse it again
    const TrainingGraphView& graphView() const { return gview_; }
    // Frames the loss and the gradient outputs (the default zoom of a new model or view).
    bool focusDefault();
    // Ops outlined as changed by the last outputsChanged(), and how many disappeared from the view.
    const std::vector<int>& changedOps() const { return changedOps_; }
    int vanishedOps() const { return vanishedOps_; }
    int layoutCacheHits() const { return cacheHits_; }
    QWidget* legend() const { return legend_; }
    QComboBox* viewBox() const { return viewBox_; }

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
    void rebuildView();
    void showLayout(const GvLayout& layout, double seconds, bool cached);
    void restyle(bool all = false);
    void updateLegend();
    void refreshBusy();
    void updateSummary();
    QString searchText(int op) const;

    TrainingGraph graph_;
    std::shared_ptr<const Network> net_;
    TrainingGraphViewOptions viewOptions_;
    TrainingGraphView gview_;                           // what is drawn (nodes, edges)
    std::string layoutDot_;                             // its layout DOT (no colours): the cache key
    std::vector<QString> names_;                        // per op: the DOT node that draws it ("" = hidden)
    QHash<QString, int> nodeIndex_;                     // node name -> gview_ node
    std::vector<int> shown_;                            // per node: the class drawn (-1 = none yet)
    std::vector<char> shownLive_;                       // graph_.live when last drawn
    std::vector<int> changedOps_;
    int vanishedOps_ = 0;
    bool refit_ = true;                                 // frame the default zoom after the next layout
    std::list<std::pair<std::string, std::shared_ptr<const GvLayout>>> cache_;   // most recent first
    int cacheHits_ = 0;
    bool lastCached_ = false;
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
    QComboBox* viewBox_;
    QCheckBox* collapseBox_;
    QWidget* legend_;
    QLabel* summary_;
    QProgressBar* busy_;
    QLabel* busyText_;
    QPushButton* cancel_;
};

}  // namespace tinyscope::ui
