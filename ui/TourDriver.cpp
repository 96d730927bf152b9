#include "TourDriver.h"

#include "AppState.h"
#include "ConvergenceChart.h"
#include "CostTotals.h"
#include "DeployDialog.h"
#include "DesignSpacePanel.h"
#include "EvaluationBox.h"
#include "ExportDialog.h"
#include "FineTunePane.h"
#include "InspectorToolbar.h"
#include "LayerCostTable.h"
#include "MainWindow.h"
#include "MemoryCards.h"
#include "Palette.h"
#include "ParetoChart.h"
#include "PeakMemoryChart.h"
#include "PredictorCardView.h"
#include "PredictorPanel.h"
#include "PredictorScatter.h"
#include "RunHistoryView.h"
#include "SearchLimitsForm.h"
#include "SearchOptionsForm.h"
#include "SearchPanel.h"
#include "SubnetControls.h"
#include "SubnetDiagramView.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"
#include "TrainingMemoryChart.h"
#include "WinnerCard.h"

#include "Error.h"
#include "io/Text.h"
#include "search/Constraints.h"
#include "space/DesignSpace.h"
#include "workspace/Workspace.h"
#include "zoo/Network.h"

#include <QEvent>
#include <QPainter>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>

#include <functional>
#include <memory>

namespace tinyscope::ui {

namespace {

// A frame drawn around a widget, over the window. It follows the widget when it moves, resizes,
// shows or hides, and (a 250 ms check) when a splitter or a tab moves one of its ancestors; it
// changes its own geometry only when the target's changed, so it never feeds an event loop.
class TourFrame : public QWidget {
public:
    explicit TourFrame(QWidget* target) : QWidget(target->window()), target_(target)
    {
        setAttribute(Qt::WA_TransparentForMouseEvents);
        setAttribute(Qt::WA_NoSystemBackground);
        setObjectName(QStringLiteral("tourHighlight"));
        target->installEventFilter(this);
        auto* follow = new QTimer(this);
        follow->setInterval(250);
        connect(follow, &QTimer::timeout, this, [this] { place(); });
        follow->start();
        place();
        raise();
    }

protected:
    bool eventFilter(QObject* o, QEvent* e) override
    {
        switch (e->type()) {
        case QEvent::Move:
        case QEvent::Resize:
        case QEvent::Show:
        case QEvent::Hide: place(); break;
        default: break;
        }
        return QWidget::eventFilter(o, e);
    }

    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        QPen pen(paletteColor("highlight"), kPen);
        p.setPen(pen);
        p.drawRoundedRect(QRectF(rect()).adjusted(kPen / 2.0, kPen / 2.0, -kPen / 2.0, -kPen / 2.0), 6, 6);
    }

private:
    static constexpr int kPen = 4;
    void place()
    {
        if (!target_) return;
        const bool visible = target_->isVisible();
        if (visible != isVisible()) setVisible(visible);
        const QRect r = QRect(target_->mapTo(window(), QPoint(0, 0)), target_->size()).adjusted(-kPen, -kPen, kPen, kPen);
        if (r != geometry()) setGeometry(r);
    }
    QPointer<QWidget> target_;
};

struct TargetEntry {
    const char* name;
    std::function<QWidget*(MainWindow*)> find;
};

template <class T>
QWidget* childOf(QWidget* w)
{
    return w ? w->findChild<T*>() : nullptr;
}

const std::vector<TargetEntry>& targets()
{
    static const std::vector<TargetEntry> all = {
        {"subnet-controls", [](MainWindow* w) { return childOf<SubnetControls>(w->designSpacePanel()); }},
        {"cost-totals", [](MainWindow* w) { return childOf<CostTotals>(w->designSpacePanel()); }},
        {"subnet-diagram", [](MainWindow* w) { return childOf<SubnetDiagramView>(w->designSpacePanel()); }},
        {"layer-costs", [](MainWindow* w) { return childOf<LayerCostTable>(w->designSpacePanel()); }},
        {"peak-chart", [](MainWindow* w) { return childOf<PeakMemoryChart>(w->designSpacePanel()); }},
        {"evaluation", [](MainWindow* w) { return childOf<EvaluationBox>(w->designSpacePanel()); }},
        {"predictor-card", [](MainWindow* w) { return childOf<PredictorCardView>(w->predictorPanel()); }},
        {"predictor-scatter", [](MainWindow* w) { return childOf<PredictorScatter>(w->predictorPanel()); }},
        {"search-limits", [](MainWindow* w) { return childOf<SearchLimitsForm>(w->searchPanel()); }},
        {"search-options", [](MainWindow* w) { return childOf<SearchOptionsForm>(w->searchPanel()); }},
        {"pareto-chart", [](MainWindow* w) { return childOf<ParetoChart>(w->searchPanel()); }},
        {"convergence-chart", [](MainWindow* w) { return childOf<ConvergenceChart>(w->searchPanel()); }},
        {"winner-card", [](MainWindow* w) { return childOf<WinnerCard>(w->searchPanel()); }},
        {"run-history", [](MainWindow* w) { return childOf<RunHistoryView>(w->searchPanel()); }},
        {"inspector-toolbar", [](MainWindow* w) { return childOf<InspectorToolbar>(w->trainingInspectorPanel()); }},
        {"memory-cards", [](MainWindow* w) { return childOf<MemoryCards>(w->trainingInspectorPanel()); }},
        {"memory-chart", [](MainWindow* w) -> QWidget* { return w->trainingInspectorPanel()->chart(); }},
        {"scheme-table", [](MainWindow* w) -> QWidget* { return w->trainingInspectorPanel()->table(); }},
        {"training-graph", [](MainWindow* w) -> QWidget* { return w->trainingInspectorPanel()->graphPane(); }},
        {"fine-tune", [](MainWindow* w) -> QWidget* { return w->trainingInspectorPanel()->fineTunePane(); }},
    };
    return all;
}

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

TourDriver::TourDriver(MainWindow* window) : QObject(window), window_(window) {}

TourDriver::~TourDriver()
{
    clearHighlights();
    closeDialogs();
}

QStringList TourDriver::targetNames()
{
    QStringList names;
    for (const TargetEntry& t : targets()) names << QString::fromLatin1(t.name);
    return names;
}

QWidget* TourDriver::target(const QString& name) const
{
    for (const TargetEntry& t : targets())
        if (name == QLatin1String(t.name)) return t.find(window_);
    return nullptr;
}

int TourDriver::highlightCount() const
{
    int n = 0;
    for (const QPointer<QWidget>& f : frames_) n += f ? 1 : 0;
    return n;
}

int TourDriver::openDialogs() const
{
    int n = 0;
    for (const QPointer<QWidget>& d : dialogs_) n += d && d->isVisible() ? 1 : 0;
    return n;
}

void TourDriver::clearHighlights()
{
    for (QPointer<QWidget>& f : frames_)
        if (f) f->deleteLater();
    frames_.clear();
}

void TourDriver::closeDialogs()
{
    for (QPointer<QWidget>& d : dialogs_)
        if (d) d->close();   // WA_DeleteOnClose
    dialogs_.clear();
}

void TourDriver::stop()
{
    ++generation_;
    if (busy_ && window_->searchPanel()->busy()) window_->searchPanel()->cancel();
    queue_.clear();
    next_ = 0;
    busy_ = false;
}

void TourDriver::perform(const std::vector<TourStep>& steps)
{
    stop();
    clearHighlights();
    for (std::size_t s = 0; s < steps.size(); ++s)
        for (const TourAction& a : steps[s].actions) queue_.emplace_back(a, s + 1 == steps.size());
    busy_ = true;
    runNext();
}

void TourDriver::runNext()
{
    while (next_ < queue_.size()) {
        const auto [action, highlight] = queue_[next_++];
        try {
            if (!perform(action, highlight)) return;   // continues when its job ends
        } catch (const std::exception& e) {
            fail(action, QString::fromUtf8(e.what()));
            return;
        }
    }
    queue_.clear();
    next_ = 0;
    busy_ = false;
    Q_EMIT finished(true, QString());
}

void TourDriver::fail(const TourAction& a, const QString& reason)
{
    queue_.clear();
    next_ = 0;
    busy_ = false;
    Q_EMIT finished(false, qs(a.where) + QStringLiteral(" (") + qs(a.action) + QStringLiteral("): ") + reason);
}

void TourDriver::reveal(QWidget* w)
{
    for (QWidget* c = w; c && c->parentWidget(); c = c->parentWidget()) {
        auto* stack = qobject_cast<QStackedWidget*>(c->parentWidget());
        if (!stack) continue;
        if (auto* tabs = qobject_cast<QTabWidget*>(stack->parentWidget())) tabs->setCurrentWidget(c);
        else stack->setCurrentWidget(c);
    }
    for (QWidget* c = w->parentWidget(); c; c = c->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(c)) area->ensureWidgetVisible(w);
}

void TourDriver::highlight(QWidget* w)
{
    reveal(w);
    frames_.emplace_back(new TourFrame(w));
}

bool TourDriver::perform(const TourAction& a, bool highlightIt)
{
    const Json& g = a.args;
    AppState* state = window_->state();
    SearchPanel* search = window_->searchPanel();
    TrainingInspectorPanel* inspector = window_->trainingInspectorPanel();
    const std::string& what = a.action;
    if (what == "workspace") {
        state->setWorkspace(shippedWorkspace(g["name"].get<std::string>()));
    } else if (what == "panel") {
        const std::string p = g["panel"].get<std::string>();
        QWidget* panel = p == "design-space" ? static_cast<QWidget*>(window_->designSpacePanel())
                         : p == "predictor"  ? static_cast<QWidget*>(window_->predictorPanel())
                         : p == "search"     ? static_cast<QWidget*>(window_->searchPanel())
                                             : static_cast<QWidget*>(inspector);
        window_->tabs()->setCurrentWidget(panel);
    } else if (what == "subnet") {
        const std::string p = g["preset"].get<std::string>();
        DesignSpacePanel* d = window_->designSpacePanel();
        if (p == "min") d->selectMin();
        else if (p == "lab-max") d->selectLabMax();
        else if (p == "full-max") d->selectFullMax();
        else d->selectRandom();
    } else if (what == "subnet-edit") {
        const DesignSpace& space = state->space();
        SubnetConfig c = state->subnet();
        if (g.contains("image_size")) c.image_size = g["image_size"].get<int>();
        if (g.contains("wid")) c.wid = g["wid"].get<int>();
        if (g.contains("ks")) std::fill(c.ks.begin(), c.ks.end(), g["ks"].get<int>());
        if (g.contains("e")) std::fill(c.e.begin(), c.e.end(), g["e"].get<int>());
        if (g.contains("d"))
            for (std::size_t s = 0; s < c.d.size(); ++s)
                if (space.stages[s].elastic_depth) c.d[s] = g["d"].get<int>();
        c.validate(space, "space " + space.name);
        state->setSubnet(c);
    } else if (what == "highlight") {
        const QString name = qs(g["target"].get<std::string>());
        QWidget* w = target(name);
        if (!w) throw InputError("no part of the window is called '" + name.toStdString() + "' (names: " + targetNames().join(QStringLiteral(", ")).toStdString() + ")");
        if (highlightIt) highlight(w);
    } else if (what == "search") {
        SearchOptions o = search->options();
        if (g.contains("algorithm")) o.algorithm = g["algorithm"].get<std::string>();
        if (g.contains("population")) o.population = g["population"].get<int>();
        if (g.contains("generations")) o.generations = g["generations"].get<int>();
        if (g.contains("seed")) o.seed = g["seed"].get<std::uint64_t>();
        o.validate();
        search->setOptions(o);
        if (g.contains("macs_m")) search->setLimit("millionMACs", g["macs_m"].get<double>(), true);
        if (g.contains("sram_kb")) search->setLimit("KBPeakMemory", g["sram_kb"].get<double>(), true);
        const Json wanted = search->constraints().toJson();
        const int generation = ++generation_;
        auto connection = std::make_shared<QMetaObject::Connection>();
        *connection = connect(search, &SearchPanel::searchFinished, this, [this, connection, generation, wanted, search, a](bool ok) {
            if (generation != generation_) {
                disconnect(*connection);
                return;
            }
            // A search the live mode started with earlier limits may end first: wait for ours.
            if (ok && (!search->lastResult() || search->lastResult()->constraints.toJson() != wanted)) return;
            disconnect(*connection);
            if (!ok || !search->lastResult()->found) {
                fail(a, QStringLiteral("the search did not finish: ") + search->statusText());
                return;
            }
            runNext();
        });
        Q_EMIT progress(QStringLiteral("running the search …"));
        search->startSearch(true);
        return false;
    } else if (what == "use-winner") {
        if (!search->lastResult() || !search->lastResult()->found) throw InputError("no search result to use: run a search first");
        search->useWinner();
    } else if (what == "deploy-dialog") {
        QWidget* d = search->deployWinner();
        if (!d) throw InputError("no Deploy dialog: " + search->statusText().toStdString());
        dialogs_.emplace_back(d);
    } else if (what == "model") {
        const QString name = qs(g["model"].get<std::string>());
        if (!inspector->selectModel(name)) throw InputError("the Training inspector has no model '" + name.toStdString() + "'");
    } else if (what == "scheme") {
        TrainingLayerModel* layers = inspector->layerModel();
        if (!layers->hasNetwork()) throw InputError("the Training inspector has no model to apply a scheme to");
        if (g.contains("published")) {
            const QString name = qs(g["published"].get<std::string>());
            if (!inspector->loadPublishedScheme(name))
                throw InputError(layers->network().name + " has no published scheme '" + name.toStdString() + "'");
        } else if (g.contains("bias_only")) {
            inspector->applyBiasOnly(g["bias_only"].get<int>());
        } else if (g.contains("last_layers")) {
            inspector->applyLastLayers(g["last_layers"].get<int>());
        } else if (g.contains("full")) {
            inspector->applyLastLayers(layers->network().numBackboneConvs());
        } else {
            inspector->resetScheme();
        }
    } else if (what == "inspector-tab") {
        const bool graph = g["tab"].get<std::string>() == "graph";
        inspector->rightTabs()->setCurrentWidget(graph ? static_cast<QWidget*>(inspector->graphPane()) : inspector->fineTunePane());
    } else if (what == "budget") {
        inspector->setBudgetKB(g["kb"].get<double>());
    } else if (what == "export-dialog") {
        auto* d = new ExportDialog(inspector->exportRequest(), window_);
        d->setBoard(window_->state()->boardName());   // the workspace's board
        d->setAttribute(Qt::WA_DeleteOnClose);
        d->show();
        dialogs_.emplace_back(d);
    } else if (what == "close-dialogs") {
        closeDialogs();
    } else {
        throw InputError("this version of Tinyscope cannot perform '" + what + "'");
    }
    return true;
}

}  // namespace tinyscope::ui
