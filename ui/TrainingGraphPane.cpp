#include "TrainingGraphPane.h"

#include "JobRunner.h"

#include "GraphFindBar.h"

#include "EventWait.h"
#include "NodeInspector.h"
#include "Palette.h"
#include "SvgGraphView.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/Text.h"
#include "viz/GraphvizRenderer.h"
#include "zoo/Network.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QShowEvent>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

namespace tinyscope::ui {

namespace {

GvStyle nodeStyle(TrainingGraphNodeClass c)
{
    const TrainingGraphNodeStyle& s = trainingGraphNodeStyle(c);
    return GvStyle{QColor(QLatin1String(s.fill)), QColor(QLatin1String(s.border)), QColor(QLatin1String(s.font)), s.penwidth, s.dashed};
}

GvStyle edgeStyle(TrainingGraphEdgeClass c)
{
    const TrainingGraphEdgeStyle& s = trainingGraphEdgeStyle(c);
    QColor colour(QLatin1String(s.color));
    // Saved-tensor edges cross the whole drawing (forward op -> its backward user): lighter on
    // screen so the two graphs stay readable; the exported DOT/SVG keep the palette.
    if (c == TrainingGraphEdgeClass::Saved) colour.setAlpha(110);
    if (c == TrainingGraphEdgeClass::Pruned) colour.setAlpha(150);
    return GvStyle{QColor(), colour, QColor(), 1.0, s.dashed};
}

// The layout's DOT of a view: no legend, title or colours (the pane draws its own legend and
// styles every item after the layout), labels that do not depend on the scheme's outputs, and the
// bounded Graphviz options of kTrainingGraphFastLayoutAttrs.
std::string layoutDot(const TrainingGraph& g, const TrainingGraphView& v)
{
    TrainingGraphDotOptions o;
    o.legend = false;
    o.stableLabels = true;
    o.styles = false;
    o.layoutAttrs = kTrainingGraphFastLayoutAttrs;
    return trainingGraphViewDot(g, v, o);
}

constexpr std::size_t kCachedLayouts = 12;

struct LayoutResult {
    GvLayout layout;
    double seconds = 0;
};

}  // namespace

TrainingGraphPane::TrainingGraphPane(QWidget* parent) : QWidget(parent)
{
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(0, 0, 0, 0);
    root->setSpacing(4);

    auto* views = new QHBoxLayout;
    viewBox_ = new QComboBox;
    const char* tips[] = {
        "Every op of the forward and backward graph; the ops the scheme prunes are grey and dashed",
        "Only the ops the scheme runs (forward, loss, kept backward): pruned ops are removed, so a sparser scheme draws a smaller graph",
        "The loss and the backward ops the scheme keeps: what runs after the forward pass",
    };
    for (int m = 0; m < kTrainingGraphViewModeCount; ++m) {
        viewBox_->addItem(QString::fromLatin1(trainingGraphViewModeName(static_cast<TrainingGraphViewMode>(m))), m);
        viewBox_->setItemData(m, QString::fromLatin1(tips[m]), Qt::ToolTipRole);
    }
    viewBox_->setToolTip(QStringLiteral("Which ops the graph draws: whole graph, kept ops only (pruned ops removed), backward only"));
    collapseBox_ = new QCheckBox(QStringLiteral("Collapse blocks"));
    collapseBox_->setToolTip(QStringLiteral("Draw the ops of each block and pass as one node (click it to expand); the loss and every "
                                            "parameter-gradient op stay visible"));
    auto* frame = new QPushButton(QStringLiteral("Loss + updated"));
    frame->setToolTip(QStringLiteral("Zoom to the loss and the gradient outputs (the layers the scheme updates)"));
    views->addWidget(new QLabel(QStringLiteral("View")));
    views->addWidget(viewBox_);
    views->addWidget(collapseBox_);
    views->addWidget(frame);
    views->addStretch(1);
    root->addLayout(views);
    findBar_ = new GraphFindBar;
    root->addWidget(findBar_);
    legend_ = trainingGraphLegend();   // wraps on a narrow pane (1280×720) rather than widening it
    root->addWidget(legend_);

    auto* split = new QSplitter(Qt::Vertical);
    view_ = new SvgGraphView;
    view_->setMinimumHeight(200);
    inspector_ = new NodeInspector;
    inspector_->setMinimumHeight(90);   // with the view row the pane still fits a 1280×720 window (test_gui)
    split->addWidget(view_);
    split->addWidget(inspector_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 1);
    split->setSizes({520, 260});
    root->addWidget(split, 1);

    auto* status = new QHBoxLayout;
    summary_ = new QLabel;
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setWordWrap(true);   // the view and last-edit notes wrap instead of widening the window
    busyText_ = new QLabel;
    busy_ = new QProgressBar;
    busy_->setRange(0, 0);
    busy_->setMaximumWidth(160);
    busy_->setMaximumHeight(14);
    busy_->setTextVisible(false);
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setToolTip(QStringLiteral("Cancel the export (Graphviz finishes its layout, nothing is written)"));
    status->addWidget(summary_, 1);
    status->addWidget(busyText_);
    status->addWidget(busy_);
    status->addWidget(cancel_);
    root->addLayout(status);
    busy_->hide();
    busyText_->hide();
    cancel_->hide();

    connect(viewBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setViewMode(static_cast<TrainingGraphViewMode>(viewBox_->itemData(i).toInt())); });
    connect(collapseBox_, &QCheckBox::toggled, this, &TrainingGraphPane::setCollapsed);
    connect(frame, &QPushButton::clicked, this, &TrainingGraphPane::focusDefault);
    connect(findBar_, &GraphFindBar::fitRequested, view_, &SvgGraphView::fitAll);
    connect(findBar_, &GraphFindBar::zoomRequested, view_, &SvgGraphView::zoomBy);
    connect(findBar_, &GraphFindBar::findRequested, this, &TrainingGraphPane::find);
    connect(view_, &SvgGraphView::nodeClicked, this, [this](const QString& name) {
        const int node = nodeIndex_.value(name, -1);
        if (node >= 0 && gview_.nodes[static_cast<std::size_t>(node)].collapsed) {
            toggleGroup(gview_.nodes[static_cast<std::size_t>(node)].group);
            return;
        }
        const int op = opIndexOfNodeName(name);
        if (op < 0 || op >= static_cast<int>(graph_.ops.size())) return;
        inspector_->showOp(graph_, op, net_.get());
        Q_EMIT opSelected(op);
    });
    connect(inspector_, &NodeInspector::opLinkActivated, this, [this](int op) { selectOp(op); });
    layoutJobs_ = new JobRunner(this);
    exportJobs_ = new JobRunner(this);
    connect(cancel_, &QPushButton::clicked, exportJobs_, &JobRunner::cancel);
    clearGraph(QStringLiteral("No graph yet."));
}

TrainingGraphPane::~TrainingGraphPane() = default;

void TrainingGraphPane::clearGraph(const QString& message)
{
    graph_ = TrainingGraph();
    net_.reset();
    names_.clear();
    shown_.clear();
    nodeIndex_.clear();
    gview_ = TrainingGraphView();
    layoutDot_.clear();
    changedOps_.clear();
    vanishedOps_ = 0;
    ++generation_;
    viewCurrent_ = true;
    refit_ = true;
    view_->clear();
    view_->setOverlayText(message);
    inspector_->showHint(QStringLiteral("No graph."));
    updateSummary();
}

void TrainingGraphPane::setGraph(TrainingGraph g, std::shared_ptr<const Network> net)
{
    // A new model (not a rebuild of the same one for another channel count) is framed afresh:
    // the old zoom would show an empty corner of the new drawing.
    if (g.model != graph_.model || net != net_ || graph_.ops.empty()) {
        refit_ = true;
        viewOptions_.expanded.clear();
    }
    graph_ = std::move(g);
    net_ = std::move(net);
    shownLive_ = graph_.live;
    changedOps_.clear();
    vanishedOps_ = 0;
    findBar_->restart();
    inspector_->showHint(QStringLiteral("Laying out the graph…"));
    rebuildView();
}

void TrainingGraphPane::rebuildView()
{
    gview_ = buildTrainingGraphView(graph_, net_.get(), viewOptions_);
    layoutDot_ = layoutDot(graph_, gview_);
    ++generation_;
    viewCurrent_ = false;
    names_.assign(graph_.ops.size(), QString());
    nodeIndex_.clear();
    for (std::size_t k = 0; k < gview_.nodes.size(); ++k) {
        const QString name = QString::fromStdString(gview_.nodes[k].name);
        nodeIndex_.insert(name, static_cast<int>(k));
        for (int op : gview_.nodes[k].ops) names_[static_cast<std::size_t>(op)] = name;
    }
    updateLegend();
    const QString ops = QString::fromStdString(groupThousands(static_cast<std::int64_t>(gview_.shownOps())));
    view_->setOverlayText(gview_.collapsedNodes() ? QStringLiteral("Laying out %1 ops as %2 nodes with Graphviz…").arg(ops).arg(gview_.nodes.size())
                                                  : QStringLiteral("Laying out %1 ops with Graphviz…").arg(ops));
    if (running_) {   // the running layout is for an older graph; this one follows it
        layoutNote_ = QStringLiteral("laying out %1 ops…").arg(ops);
        refreshBusy();
    }
    updateSummary();
    // A pane nobody sees (another tab) lays out when it is shown or waited for.
    if (!running_ && (isVisible() || waiting_)) startLayout();
}

void TrainingGraphPane::updateLegend()
{
    const TrainingGraphViewMode m = viewOptions_.mode;
    auto show = [this](const char* key, bool on) {
        if (QWidget* w = legend_->findChild<QWidget*>(QStringLiteral("legend-") + QLatin1String(key))) w->setVisible(on);
    };
    show("forward", m != TrainingGraphViewMode::Backward);
    show("pruned", m == TrainingGraphViewMode::Whole);
    show("saved", m != TrainingGraphViewMode::Backward);
    show("group", gview_.collapsedNodes() > 0);
    show("changed", !changedOps_.empty());
}

void TrainingGraphPane::setViewMode(TrainingGraphViewMode mode)
{
    if (viewBox_->currentIndex() != static_cast<int>(mode)) {
        viewBox_->setCurrentIndex(static_cast<int>(mode));   // comes back here through the signal
        return;
    }
    if (mode == viewOptions_.mode) return;
    viewOptions_.mode = mode;
    refit_ = true;
    if (hasGraph()) rebuildView();
    else updateLegend();
}

void TrainingGraphPane::setCollapsed(bool collapse)
{
    if (collapseBox_->isChecked() != collapse) {
        collapseBox_->setChecked(collapse);
        return;
    }
    if (collapse == viewOptions_.collapse) return;
    viewOptions_.collapse = collapse;
    viewOptions_.expanded.clear();
    refit_ = true;
    if (hasGraph()) rebuildView();
    else updateLegend();
}

bool TrainingGraphPane::toggleGroup(int group)
{
    if (!viewOptions_.collapse || group < 0 || group >= static_cast<int>(gview_.groupNames.size())) return false;
    if (!viewOptions_.expanded.erase(group)) viewOptions_.expanded.insert(group);
    rebuildView();   // keeps the zoom
    return true;
}

bool TrainingGraphPane::focusDefault()
{
    if (!viewCurrent_) return false;
    // The loss, then the gradient outputs nearest to it while labels stay readable (0.55×).
    QStringList loss, updated;
    std::vector<char> leaf(graph_.tensors.size(), 0);
    for (const GraphOutput& o : graph_.outputs)
        if (o.kind != GradientKind::Loss) leaf[static_cast<std::size_t>(o.tensor)] = 1;
    for (std::size_t i = 0; i < graph_.ops.size(); ++i) {
        if (names_[i].isEmpty()) continue;
        if (graph_.ops[i].phase == Phase::Loss) loss << names_[i];
        else if (leaf[static_cast<std::size_t>(graph_.ops[i].output)]) updated << names_[i];
    }
    if (view_->frameNodes(loss, updated, 0.55)) return true;
    view_->fitAll();
    return false;
}

void TrainingGraphPane::showEvent(QShowEvent* e)
{
    QWidget::showEvent(e);
    if (!running_ && !viewCurrent_) startLayout();
}

void TrainingGraphPane::startLayout()
{
    const int gen = generation_;
    const std::string dot = layoutDot_;
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
        if (it->first == dot) {   // laid out before: show it now, most recent first
            cache_.splice(cache_.begin(), cache_, it);
            ++cacheHits_;
            showLayout(*cache_.front().second, 0, true);
            return;
        }
    running_ = true;
    layoutNote_ = QStringLiteral("laying out %1 ops…").arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(gview_.shownOps()))));
    refreshBusy();
    auto dotText = std::make_shared<std::string>(dot);
    // Graphviz cannot be interrupted: the job has no cancel point; a superseded layout is dropped
    // (but cached: returning to that view shows it at once).
    auto finish = [this, gen, dotText](const LayoutResult* result, const QString& error) {
        running_ = false;
        layoutNote_.clear();
        refreshBusy();
        if (result) {
            cache_.emplace_front(*dotText, std::make_shared<const GvLayout>(result->layout));
            if (cache_.size() > kCachedLayouts) cache_.pop_back();
        }
        if (gen != generation_) {   // superseded while Graphviz worked
            if (isVisible() || waiting_) startLayout();
            return;
        }
        if (!result) {
            view_->clear();
            view_->setOverlayText(QStringLiteral("Layout failed: %1").arg(error));
            viewCurrent_ = true;
            updateSummary();
            Q_EMIT layoutFinished();
            return;
        }
        showLayout(result->layout, result->seconds, false);
    };
    layoutJobs_->run(
        [dotText](const JobControl&) {
            QElapsedTimer t;
            t.start();
            LayoutResult r;
            r.layout = parseGraphvizSvg(QByteArray::fromStdString(renderDotToSvg(*dotText)));
            r.seconds = static_cast<double>(t.elapsed()) / 1000.0;
            return r;
        },
        [finish](const LayoutResult& r) { finish(&r, QString()); }, [finish](const JobFailure& f) { finish(nullptr, f.message); });
}

void TrainingGraphPane::showLayout(const GvLayout& layout, double seconds, bool cached)
{
    view_->setLayout(layout, {}, !refit_);
    view_->setOverlayText(QString());
    viewCurrent_ = true;
    lastLayoutSeconds_ = seconds;
    lastCached_ = cached;
    restyle(true);   // the layout carries no colours; outputs may also have changed while Graphviz worked
    if (refit_) {
        focusDefault();
        refit_ = false;
    }
    inspector_->showHint(QStringLiteral("Click an op in the graph, or search for one, to see its attributes and tensors."));
    Q_EMIT layoutFinished();
}

void TrainingGraphPane::outputsChanged()
{
    // What the edit changed: ops that became live (appeared) or were pruned (disappeared).
    changedOps_.clear();
    vanishedOps_ = 0;
    if (shownLive_.size() == graph_.live.size())
        for (std::size_t i = 0; i < graph_.live.size(); ++i) {
            if (shownLive_[i] == graph_.live[i]) continue;
            const int op = static_cast<int>(i);
            const bool shows = trainingGraphViewShows(graph_, viewOptions_.mode, op);
            if (shows) changedOps_.push_back(op);
            else if (trainingGraphViewShows(graph_, TrainingGraphViewMode::Whole, op)) ++vanishedOps_;
        }
    shownLive_ = graph_.live;
    // The same drawing (the whole graph, or a view whose nodes did not change): recolour; else
    // lay the view out again (or take it from the cache).
    const TrainingGraphView next = buildTrainingGraphView(graph_, net_.get(), viewOptions_);
    if (layoutDot(graph_, next) == layoutDot_) {
        gview_ = next;
        updateLegend();
        restyle();
    } else {
        rebuildView();
    }
    if (inspector_->op() >= 0 && inspector_->op() < static_cast<int>(graph_.ops.size()))
        inspector_->showOp(graph_, inspector_->op(), net_.get());
}

void TrainingGraphPane::restyle(bool all)
{
    updateSummary();
    if (!viewCurrent_) return;
    if (all) shown_.assign(gview_.nodes.size(), -1);
    if (shown_.size() != gview_.nodes.size()) return;
    const std::vector<TrainingGraphNodeClass> classes = trainingGraphViewNodeClasses(graph_, gview_);
    std::vector<char> changed(gview_.nodes.size(), 0);
    for (int op : changedOps_)
        if (gview_.nodeOfOp[static_cast<std::size_t>(op)] >= 0) changed[static_cast<std::size_t>(gview_.nodeOfOp[static_cast<std::size_t>(op)])] = 1;
    std::vector<char> restyled(gview_.nodes.size(), 0);
    for (std::size_t k = 0; k < classes.size(); ++k) {
        const int c = static_cast<int>(classes[k]) + (changed[k] ? 100 : 0);   // outlined nodes are a style of their own
        if (c == shown_[k]) continue;
        GvStyle st = nodeStyle(classes[k]);
        if (changed[k]) {
            st.stroke = paletteColor("highlight");
            st.width = 3.5;
        }
        view_->setNodeStyle(QString::fromStdString(gview_.nodes[k].name), st);
        restyled[k] = 1;
        shown_[k] = c;
    }
    for (const TrainingGraphViewEdge& e : gview_.edges)   // on-screen edge styles (see edgeStyle)
        if (all || restyled[static_cast<std::size_t>(e.to)])
            view_->setEdgeStyle(QString::fromStdString(gview_.nodes[static_cast<std::size_t>(e.from)].name),
                                QString::fromStdString(gview_.nodes[static_cast<std::size_t>(e.to)].name),
                                edgeStyle(trainingGraphViewEdgeClass(graph_, gview_, e)));
}

void TrainingGraphPane::updateSummary()
{
    if (graph_.ops.empty()) {
        summary_->clear();
        return;
    }
    QString s = QStringLiteral("%1 ops: %2 kept, %3 pruned · %4 gradient outputs")
                    .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(graph_.ops.size()))))
                    .arg(graph_.liveOps())
                    .arg(graph_.prunedOps())
                    .arg(graph_.outputs.empty() ? 0 : static_cast<int>(graph_.outputs.size()) - 1);
    if (!graph_.model.empty()) s = QString::fromStdString(graph_.model) + QStringLiteral(" (") +
                                   QString::fromLatin1(autodiffModeName(graph_.mode)) + QStringLiteral(" autodiff) — ") + s;
    if (viewOptions_.mode != TrainingGraphViewMode::Whole || gview_.collapsedNodes())
        s += QStringLiteral(" · %1: %2 ops as %3 nodes")
                 .arg(QString::fromLatin1(trainingGraphViewModeName(viewOptions_.mode)))
                 .arg(gview_.shownOps())
                 .arg(gview_.nodes.size());
    if (!changedOps_.empty() || vanishedOps_)
        s += QStringLiteral(" · last edit: %1 ops appeared or changed, %2 disappeared").arg(changedOps_.size()).arg(vanishedOps_);
    if (viewCurrent_ && lastCached_) s += QStringLiteral(" · layout cached");
    else if (lastLayoutSeconds_ > 0 && viewCurrent_) s += QStringLiteral(" · layout %1 s").arg(lastLayoutSeconds_, 0, 'f', 1);
    summary_->setText(s);
}

QString TrainingGraphPane::summaryText() const { return summary_->text(); }

void TrainingGraphPane::refreshBusy()
{
    QStringList parts;
    if (!layoutNote_.isEmpty()) parts << layoutNote_;
    if (!exportNote_.isEmpty()) parts << exportNote_;
    const QString text = parts.join(QStringLiteral(" · "));
    busyText_->setText(text);
    busyText_->setVisible(!text.isEmpty());
    busy_->setVisible(!text.isEmpty());
    cancel_->setVisible(exporting_);
}

bool TrainingGraphPane::waitForLayout(int timeoutMs)
{
    waiting_ = true;
    if (!running_ && !viewCurrent_) startLayout();
    const bool done = processEventsUntil([this] { return !layoutPending(); }, timeoutMs);
    waiting_ = false;
    return done;
}

QString TrainingGraphPane::searchText(int op) const
{
    const Op& o = graph_.op(op);
    QString s = names_[static_cast<std::size_t>(op)];
    if (net_ && o.layer >= 0 && o.layer < static_cast<int>(net_->layers.size())) s += QLatin1Char(' ') + QString::fromStdString(net_->layer(o.layer).name);
    for (int in : o.inputs) {
        const Tensor& t = graph_.tensor(in);
        if (t.kind == TensorKind::Parameter) s += QLatin1Char(' ') + QString::fromStdString(t.name);
    }
    for (const GraphOutput& out : graph_.outputs)
        if (out.tensor == o.output) s += QLatin1Char(' ') + QString::fromStdString(out.info);
    return s;
}

bool TrainingGraphPane::find(const QString& text)
{
    // Only ops the view draws (alone or in a block) can be found.
    const int hit = findBar_->next(text, static_cast<int>(graph_.ops.size()),
                                   [this](int op) { return names_[static_cast<std::size_t>(op)].isEmpty() ? QString() : searchText(op); });
    return hit >= 0 && focusOp(hit, 0.9);   // readable around the hit
}

bool TrainingGraphPane::focusOp(int op, double minScale)
{
    const bool ok = selectOp(op);
    if (ok && viewCurrent_) view_->focusNode(names_[static_cast<std::size_t>(op)], minScale);
    return ok;
}

bool TrainingGraphPane::selectOp(int op)
{
    if (op < 0 || op >= static_cast<int>(graph_.ops.size())) return false;
    inspector_->showOp(graph_, op, net_.get());
    const QString& name = names_[static_cast<std::size_t>(op)];
    const bool shown = viewCurrent_ && !name.isEmpty() && view_->selectNode(name);
    Q_EMIT opSelected(op);
    return shown || !viewCurrent_;
}

int TrainingGraphPane::selectedOp() const { return inspector_->op(); }

std::string TrainingGraphPane::renderGraphFile(const TrainingGraph& g, const std::string& path, const std::string& title)
{
    TrainingGraphDotOptions o;
    o.title = title;
    o.stableLabels = true;
    return renderDotForFile(trainingGraphDot(g, o), path);
}

void TrainingGraphPane::writeGraphFile(const TrainingGraph& g, const std::string& path, const std::string& title)
{
    writeFileAtomic(path, renderGraphFile(g, path, title));
}

void TrainingGraphPane::exportGraph(const QString& path, const QString& title)
{
    if (exporting_ || graph_.ops.empty()) return;
    exporting_ = true;
    exportNote_ = QStringLiteral("exporting %1…").arg(QFileInfo(path).fileName());
    refreshBusy();
    auto g = std::make_shared<TrainingGraph>(graph_);
    const std::string p = path.toStdString(), t = title.toStdString();
    auto done = [this](bool ok, const QString& message) {
        exporting_ = false;
        exportNote_.clear();
        refreshBusy();
        Q_EMIT exportFinished(ok, message);
    };
    exportJobs_->run(
        [g, p, t](const JobControl& job) {
            const std::string data = renderGraphFile(*g, p, t);
            job.check();   // a cancelled export writes nothing
            writeFileAtomic(p, data);
        },
        [done, path] { done(true, QStringLiteral("Wrote %1").arg(path)); },
        [done, path](const JobFailure& f) { done(false, f.cancelled ? QStringLiteral("Export cancelled; %1 not written.").arg(path) : f.message); });
}

bool TrainingGraphPane::waitForExport(int timeoutMs)
{
    return processEventsUntil([this] { return !exporting_; }, timeoutMs);
}

}  // namespace tinyscope::ui
