#include "TrainingGraphPane.h"

#include "JobRunner.h"

#include "GraphFindBar.h"

#include "EventWait.h"
#include "NodeInspector.h"
#include "SvgGraphView.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/Text.h"
#include "viz/GraphvizRenderer.h"
#include "zoo/Network.h"

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

// The layout's DOT: every op, no legend or title (the pane draws its own legend), and labels
// that do not depend on the scheme's outputs.
std::string layoutDot(const TrainingGraph& g)
{
    TrainingGraphDotOptions o;
    o.legend = false;
    o.stableLabels = true;
    return trainingGraphDot(g, o);
}

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

    findBar_ = new GraphFindBar;
    root->addWidget(findBar_);
    root->addWidget(trainingGraphLegend());   // wraps on a narrow pane (1280×720) rather than widening it

    auto* split = new QSplitter(Qt::Vertical);
    view_ = new SvgGraphView;
    view_->setMinimumHeight(200);
    inspector_ = new NodeInspector;
    inspector_->setMinimumHeight(120);
    split->addWidget(view_);
    split->addWidget(inspector_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 1);
    split->setSizes({520, 260});
    root->addWidget(split, 1);

    auto* status = new QHBoxLayout;
    summary_ = new QLabel;
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
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

    connect(findBar_, &GraphFindBar::fitRequested, view_, &SvgGraphView::fitAll);
    connect(findBar_, &GraphFindBar::zoomRequested, view_, &SvgGraphView::zoomBy);
    connect(findBar_, &GraphFindBar::findRequested, this, &TrainingGraphPane::find);
    connect(view_, &SvgGraphView::nodeClicked, this, [this](const QString& name) {
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
    ++generation_;
    viewCurrent_ = true;
    view_->clear();
    view_->setOverlayText(message);
    inspector_->showHint(QStringLiteral("No graph."));
    updateSummary();
}

void TrainingGraphPane::setGraph(TrainingGraph g, std::shared_ptr<const Network> net)
{
    graph_ = std::move(g);
    net_ = std::move(net);
    ++generation_;
    viewCurrent_ = false;
    names_.clear();
    names_.reserve(graph_.ops.size());
    for (std::size_t i = 0; i < graph_.ops.size(); ++i)
        names_.push_back(QString::fromStdString(trainingGraphNodeName(graph_, static_cast<int>(i))));
    findBar_->restart();
    inspector_->showHint(QStringLiteral("Laying out the graph…"));
    const QString ops = QString::fromStdString(groupThousands(static_cast<std::int64_t>(graph_.ops.size())));
    view_->setOverlayText(QStringLiteral("Laying out %1 ops with Graphviz…").arg(ops));
    if (running_) {   // the running layout is for an older graph; this one follows it
        layoutNote_ = QStringLiteral("laying out %1 ops…").arg(ops);
        refreshBusy();
    }
    updateSummary();
    // A pane nobody sees (another tab) lays out when it is shown or waited for.
    if (!running_ && isVisible()) startLayout();
}

void TrainingGraphPane::showEvent(QShowEvent* e)
{
    QWidget::showEvent(e);
    if (!running_ && !viewCurrent_) startLayout();
}

void TrainingGraphPane::startLayout()
{
    running_ = true;
    const int gen = generation_;
    const std::size_t ops = graph_.ops.size();
    layoutNote_ = QStringLiteral("laying out %1 ops…").arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(ops))));
    refreshBusy();
    auto dot = std::make_shared<std::string>(layoutDot(graph_));
    auto classes = std::make_shared<std::vector<TrainingGraphNodeClass>>(trainingGraphNodeClasses(graph_));
    // Graphviz cannot be interrupted: the job has no cancel point; a superseded layout is dropped.
    auto finish = [this, gen, classes](const LayoutResult* result, const QString& error) {
        running_ = false;
        layoutNote_.clear();
        refreshBusy();
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
        view_->setLayout(result->layout, {}, true);
        view_->setOverlayText(QString());
        shown_ = *classes;
        viewCurrent_ = true;
        lastLayoutSeconds_ = result->seconds;
        for (std::size_t i = 0; i < graph_.ops.size(); ++i)   // on-screen edge styles (see edgeStyle)
            for (int in : graph_.ops[i].inputs) {
                const int p = graph_.tensor(in).producer;
                if (p >= 0) view_->setEdgeStyle(names_[static_cast<std::size_t>(p)], names_[i], edgeStyle(trainingGraphEdgeClass(graph_, p, static_cast<int>(i))));
            }
        restyle();   // outputs may have changed while Graphviz worked
        inspector_->showHint(QStringLiteral("Click an op in the graph, or search for one, to see its attributes and tensors."));
        Q_EMIT layoutFinished();
    };
    layoutJobs_->run(
        [dot](const JobControl&) {
            QElapsedTimer t;
            t.start();
            LayoutResult r;
            r.layout = parseGraphvizSvg(QByteArray::fromStdString(renderDotToSvg(*dot)));
            r.seconds = static_cast<double>(t.elapsed()) / 1000.0;
            return r;
        },
        [finish](const LayoutResult& r) { finish(&r, QString()); }, [finish](const JobFailure& f) { finish(nullptr, f.message); });
}

void TrainingGraphPane::outputsChanged()
{
    restyle();
    if (inspector_->op() >= 0 && inspector_->op() < static_cast<int>(graph_.ops.size()))
        inspector_->showOp(graph_, inspector_->op(), net_.get());
}

void TrainingGraphPane::restyle()
{
    updateSummary();
    if (!viewCurrent_ || shown_.size() != graph_.ops.size()) return;
    const std::vector<TrainingGraphNodeClass> classes = trainingGraphNodeClasses(graph_);
    for (std::size_t i = 0; i < classes.size(); ++i) {
        if (classes[i] == shown_[i]) continue;
        const bool liveChanged = (classes[i] == TrainingGraphNodeClass::Pruned) != (shown_[i] == TrainingGraphNodeClass::Pruned);
        view_->setNodeStyle(names_[i], nodeStyle(classes[i]));
        if (liveChanged) {
            const int op = static_cast<int>(i);
            for (int in : graph_.ops[i].inputs) {
                const int p = graph_.tensor(in).producer;
                if (p >= 0) view_->setEdgeStyle(names_[static_cast<std::size_t>(p)], names_[i], edgeStyle(trainingGraphEdgeClass(graph_, p, op)));
            }
        }
        shown_[i] = classes[i];
    }
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
    if (lastLayoutSeconds_ > 0 && viewCurrent_) s += QStringLiteral(" · layout %1 s").arg(lastLayoutSeconds_, 0, 'f', 1);
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
    const int hit = findBar_->next(text, static_cast<int>(graph_.ops.size()), [this](int op) { return searchText(op); });
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
    const bool shown = viewCurrent_ && view_->selectNode(names_[static_cast<std::size_t>(op)]);
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
