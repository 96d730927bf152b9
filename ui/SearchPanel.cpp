#include "SearchPanel.h"

#include "AppState.h"
#include "DeployDialog.h"
#include "ErrorBox.h"
#include "JobRunner.h"
#include "ConvergenceChart.h"
#include "LiveSearch.h"
#include "Palette.h"
#include "ParetoChart.h"
#include "Presentation.h"
#include "RunHistoryView.h"
#include "SearchLimitsForm.h"
#include "SearchOptionsForm.h"
#include "SearchPlayback.h"
#include "TourActions.h"
#include "search/StoredSearch.h"
#include "WinnerCard.h"

#include "Error.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/accuracy/EvaluationJob.h"
#include "search/Feasibility.h"
#include "search/SearchHistory.h"
#include "search/TinyEngineTrainingLimit.h"
#include "search/TrainingMemoryLimit.h"
#include "space/SpacePresets.h"
#include "space/SpaceTransfer.h"
#include "workspace/Workspace.h"

#include <QCheckBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>

namespace tinyscope::ui {

namespace {
QString nowIso() { return QDateTime::currentDateTime().toString(Qt::ISODate); }
}  // namespace

SearchPanel::SearchPanel(AppState* state, const QString& historyPath, QWidget* parent)
    : QWidget(parent), state_(state), search_(new LiveSearch(this)), measureRunner_(new JobRunner(this))
{
    // The limits and options scroll; Live, Run / Cancel, the progress and the status stay pinned
    // below them, in view on a 1280×720 screen and in presentation mode (issue 47).
    auto* scroll = new QScrollArea;
    scroll->setWidget(buildControls());
    scroll->setWidgetResizable(true);
    auto* column = new QWidget;
    auto* columnLayout = new QVBoxLayout(column);
    columnLayout->setContentsMargins(0, 0, 0, 0);
    columnLayout->addWidget(scroll, 1);
    columnLayout->addWidget(buildRunRow());
    Presentation::followWidths(column, 380, 460);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(column);
    split->addWidget(buildResults());
    split->setStretchFactor(1, 1);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);

    liveTimer_ = new QTimer(this);
    liveTimer_->setSingleShot(true);
    liveTimer_->setInterval(30);
    connect(liveTimer_, &QTimer::timeout, this, [this] { startSearch(liveRecord_); });
    connect(limits_, &SearchLimitsForm::edited, this, &SearchPanel::onLimitEdited);
    connect(run_, &QPushButton::clicked, this, [this] { startSearch(true); });
    connect(cancelButton_, &QPushButton::clicked, this, &SearchPanel::cancel);
    connect(winner_, &WinnerCard::useRequested, this, &SearchPanel::useWinner);
    connect(winner_, &WinnerCard::deployRequested, this, [this] { deployWinner(); });
    connect(winner_, &WinnerCard::measureRequested, this, [this] { measureWinner(0); });
    connect(playback_, &SearchPlayback::generationChanged, this, [this](int g) {
        pareto_->setGeneration(g);
        convergence_->showGeneration(g);
        playback_->setSummary(pareto_->summary());
    });
    connect(pareto_, &ParetoChart::candidateClicked, this, &SearchPanel::loadCandidate);
    connect(history_, &RunHistoryView::reopenRequested, this, &SearchPanel::reopen);
    connect(history_, &RunHistoryView::exportRequested, this, &SearchPanel::exportHistory);
    connectRunners();
    // After SearchLimitsForm's own handler (it set the new space's ranges and starting limits).
    connect(state_, &AppState::spaceChanged, this, &SearchPanel::onSpaceChanged);
    setHistoryPath(historyPath);
}

SearchPanel::~SearchPanel() = default;   // the runners (children) cancel their jobs and wait

void SearchPanel::addTourActions(TourActions& actions)
{
    // Runs on this panel's worker; the tour goes on when the search with the tour's limits ends.
    actions.addAction("search", [this](const Json& g, TourRun& run) {
        SearchOptions o = options();
        if (g.contains("algorithm")) o.algorithm = g["algorithm"].get<std::string>();
        if (g.contains("population")) o.population = g["population"].get<int>();
        if (g.contains("generations")) o.generations = g["generations"].get<int>();
        if (g.contains("seed")) o.seed = g["seed"].get<std::uint64_t>();
        o.validate();
        setOptions(o);
        if (g.contains("macs_m")) setLimit("millionMACs", g["macs_m"].get<double>(), true);
        if (g.contains("sram_kb")) setLimit("KBPeakMemory", g["sram_kb"].get<double>(), true);
        const Json wanted = constraints().toJson();
        const TourRun::Later later = run.later();
        auto connection = std::make_shared<QMetaObject::Connection>();
        *connection = connect(this, &SearchPanel::searchFinished, this, [this, connection, wanted, later](bool ok) {
            if (!later.current()) {
                disconnect(*connection);
                return;
            }
            // A search the live mode started with earlier limits may end first: wait for ours.
            if (ok && (!lastResult() || lastResult()->constraints.toJson() != wanted)) return;
            disconnect(*connection);
            if (!ok || !lastResult()->found) later.finish(false, QStringLiteral("the search did not finish: ") + statusText());
            else later.finish(true, QString());
        });
        run.status(QStringLiteral("running the search …"));
        startSearch(true);
        return false;
    });
    actions.addStop([this] {
        if (busy()) cancel();
    });
    actions.addAction("use-winner", [this](const Json&, TourRun&) {
        if (!lastResult() || !lastResult()->found) throw InputError("no search result to use: run a search first");
        useWinner();
        return true;
    });
    actions.addAction("deploy-dialog", [this](const Json&, TourRun& run) {
        QWidget* d = deployWinner();
        if (!d) throw InputError("no Deploy dialog: " + statusText().toStdString());
        run.keepDialog(d);
        return true;
    });
    actions.addTarget("search-limits", [this] { return findChild<SearchLimitsForm*>(); });
    actions.addTarget("search-options", [this] { return findChild<SearchOptionsForm*>(); });
    actions.addTarget("pareto-chart", [this] { return findChild<ParetoChart*>(); });
    actions.addTarget("convergence-chart", [this] { return findChild<ConvergenceChart*>(); });
    actions.addTarget("winner-card", [this] { return findChild<WinnerCard*>(); });
    actions.addTarget("run-history", [this] { return findChild<RunHistoryView*>(); });
}

QWidget* SearchPanel::buildControls()
{
    auto* controls = new QWidget;
    auto* side = new QVBoxLayout(controls);
    limits_ = new SearchLimitsForm(state_);
    side->addWidget(limits_);
    options_ = new SearchOptionsForm;
    side->addWidget(options_);
    oracleLabel_ = new QLabel;
    oracleLabel_->setWordWrap(true);
    oracleLabel_->setStyleSheet(QStringLiteral("color: %1").arg(paletteName("text.note")));
    side->addWidget(oracleLabel_);
    side->addStretch(1);
    return controls;
}

QWidget* SearchPanel::buildRunRow()
{
    auto* box = new QWidget;
    auto* side = new QVBoxLayout(box);
    side->setContentsMargins(6, 4, 6, 0);
    live_ = new QCheckBox(QStringLiteral("Live: re-run while a limit moves"));
    live_->setToolTip(QStringLiteral("Each limit change runs the search again. A search under 100 ms restarts at once; a slower one "
                                     "finishes first, then runs with the latest limits, so results follow the limits at its pace"));
    live_->setChecked(true);
    side->addWidget(live_);
    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(QStringLiteral("Run"));
    run_->setDefault(true);
    cancelButton_ = new QPushButton(QStringLiteral("Cancel"));
    run_->setToolTip(QStringLiteral("Search under the limits with the options (off the GUI thread); the run is kept in the history"));
    cancelButton_->setToolTip(QStringLiteral("Stop the search; the best found so far is shown"));
    cancelButton_->setEnabled(false);
    buttons->addWidget(run_);
    buttons->addWidget(cancelButton_);
    side->addLayout(buttons);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1);
    progress_->setValue(0);
    side->addWidget(progress_);
    status_ = new QLabel;
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::RichText);
    side->addWidget(status_);
    return box;
}

QWidget* SearchPanel::buildResults()
{
    convergence_ = new ConvergenceChart;
    pareto_ = new ParetoChart;
    winner_ = new WinnerCard;
    history_ = new RunHistoryView;
    auto* charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(convergence_);
    charts->addWidget(pareto_);
    charts->setStretchFactor(0, 2);
    charts->setStretchFactor(1, 3);
    playback_ = new SearchPlayback;
    auto* chartsBox = new QWidget;
    auto* chartsLayout = new QVBoxLayout(chartsBox);
    chartsLayout->setContentsMargins(0, 0, 0, 0);
    chartsLayout->addWidget(charts, 1);
    chartsLayout->addWidget(playback_);
    auto* bottom = new QSplitter(Qt::Horizontal);
    bottom->addWidget(winner_);
    bottom->addWidget(history_);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(chartsBox);
    right->addWidget(bottom);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    return right;
}

void SearchPanel::connectRunners()
{
    connect(search_, &LiveSearch::generations, this, &SearchPanel::showGenerations);
    connect(search_, &LiveSearch::finished, this, &SearchPanel::finishSearch);
    connect(search_, &LiveSearch::rerunDue, this, [this](bool record) {
        setBusy(false);
        startSearch(record);
    });
    connect(search_, &LiveSearch::failed, this, [this](const QString& message) {
        setBusy(false);
        setError(message);
        Q_EMIT searchFinished(false);
    });
    connect(measureRunner_, &JobRunner::progress, this, [this](qint64 done, qint64 total, const QString& stage) {
        measureProgress_ = QStringLiteral("measuring: %1 %2/%3").arg(stage).arg(done).arg(total);
        refreshMeasurement();
    });
    auto measureEnded = [this](const QString& message) {
        refreshMeasurement();
        Q_EMIT state_->message(message);
        Q_EMIT winnerMeasured(false);
    };
    connect(measureRunner_, &JobRunner::failed, this, measureEnded);
    connect(measureRunner_, &JobRunner::cancelled, this, [measureEnded] { measureEnded(QStringLiteral("Measuring cancelled.")); });
}

void SearchPanel::setLimit(const std::string& key, double value, bool enabled) { limits_->setLimit(key, value, enabled); }
void SearchPanel::setTrainingLimit(double kb, const QString& pattern, bool enabled) { limits_->setTrainingLimit(kb, pattern, enabled); }
Constraints SearchPanel::constraints() const { return limits_->constraints(); }
SearchOptions SearchPanel::options() const { return options_->options(); }
void SearchPanel::setOptions(const SearchOptions& o) { options_->setOptions(o); }

void SearchPanel::setOracle(std::shared_ptr<AccuracyOracle> oracle)
{
    oracle_ = std::move(oracle);
    oracleLabel_->setText(oracle_ ? QStringLiteral("Accuracy from: %1").arg(QString::fromStdString(oracle_->describe()))
                                  : QStringLiteral("No accuracy predictor: train or load one in the Predictor panel."));
    run_->setEnabled(oracle_ != nullptr && !busy());
}

void SearchPanel::setHistoryPath(const QString& path)
{
    const QString p = path.isEmpty() ? QString::fromStdString(userStateDir()) + QStringLiteral("/search-history.json") : path;
    const QString warning = history_->setPath(p);
    if (!warning.isEmpty()) status_->setText(QStringLiteral("Run history: %1").arg(warning.toHtmlEscaped()));
}

bool SearchPanel::busy() const { return search_->busy(); }
bool SearchPanel::measuring() const { return measureRunner_->busy(); }
double SearchPanel::lastSeconds() const { return search_->lastSeconds(); }
const std::string& SearchPanel::winnerDiagramDot() const { return winner_->diagramDot(); }
int SearchPanel::historyRows() const { return history_->rows(); }
int SearchPanel::convergencePoints() const { return convergence_->points(); }
int SearchPanel::paretoPoints() const { return pareto_->points(); }
QString SearchPanel::statusText() const { return status_->text(); }

void SearchPanel::showEvent(QShowEvent* e)
{
    QWidget::showEvent(e);
    if (shownOnce_) return;
    shownOnce_ = true;
    if (!shown_ && oracle_ && !busy()) QTimer::singleShot(0, this, [this] {
            if (!shown_ && !busy()) startSearch(false);
        });
}

void SearchPanel::cancel()
{
    search_->cancel();
}

void SearchPanel::setBusy(bool on)
{
    run_->setEnabled(!on && oracle_);
    cancelButton_->setEnabled(on);
}

void SearchPanel::setError(const QString& message, const QString& prefix)
{
    status_->setText(QStringLiteral("<span style='color:%1'>%2%3</span>").arg(paletteName("search.error"), prefix, message.toHtmlEscaped()));
}

void SearchPanel::onLimitEdited(bool fromDrag)
{
    // Issue 19: live mode used to switch itself off, mid-drag, once a search took 100 ms or more.
    if (!live_->isChecked()) {
        if (!busy()) status_->setText(QStringLiteral("Limits changed: press Run."));
        return;
    }
    liveRecord_ = liveRecord_ || !fromDrag;
    liveTimer_->start();
}

void SearchPanel::startSearch(bool record)
{
    if (search_->queue(record)) return;   // a re-run with the latest limits follows the running search
    liveRecord_ = false;
    if (!oracle_) {
        status_->setText(QStringLiteral("No accuracy predictor: train or load one in the Predictor panel."));
        Q_EMIT searchFinished(false);
        return;
    }
    const DesignSpace space = state_->space();
    Constraints constraints;
    SearchOptions options;
    try {
        constraints = limits_->constraints();
        options = options_->options();
        options.validate();
        requireFeasible(space, constraints);   // exact and fast: answer at once
    } catch (const InfeasibleError& e) {
        setError(QString::fromUtf8(e.what()), QStringLiteral("<b>Impossible:</b> "));
        Q_EMIT searchFinished(false);
        return;
    } catch (const std::exception& e) {
        setError(QString::fromUtf8(e.what()));
        Q_EMIT searchFinished(false);
        return;
    }
    convergence_->start(options.generations);
    playback_->pause();   // the run shown stays until the new one ends, then plays back from its last generation
    progress_->setRange(0, std::max(1, options.generations + 1));
    progress_->setValue(0);
    setBusy(true);
    status_->setText(QStringLiteral("Searching: %1…").arg(QString::fromStdString(constraints.describe())));
    search_->start(space, constraints, options, oracle_, record);
}

void SearchPanel::showGenerations(const std::vector<GenerationStats>& gens)
{
    for (const GenerationStats& g : gens) {
        convergence_->append(g);
        progress_->setValue(g.generation + 1);
        status_->setText(QStringLiteral("generation %1: best %2 %").arg(g.generation).arg(g.best, 0, 'f', 3));
    }
}

void SearchPanel::finishSearch(const SearchResult& result, const DesignSpace& space, bool record)
{
    setBusy(false);
    auto r = std::make_shared<const SearchResult>(result);
    progress_->setValue(progress_->maximum());
    if (record && !r->cancelled) history_->add(SearchRunRecord::fromResult(*r, space.name, nowIso().toStdString()));
    if (AppState::keyOf(space) != state_->spaceKey()) {
        // Finished after the workspace changed: it belongs to its own space and waits there.
        if (!r->cancelled) keptRuns_[AppState::keyOf(space)] = KeptRun{r, space, WinnerMeasurement()};
        Q_EMIT searchFinished(!r->cancelled);
        return;
    }
    show(r, space);
    status_->setText(QStringLiteral("%1 %2 subnets in %3 ms%4%5")
                         .arg(r->cancelled ? QStringLiteral("Cancelled after") : QStringLiteral("Done:"))
                         .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(r->evaluated.size()))))
                         .arg(r->seconds * 1e3, 0, 'f', 1)
                         .arg(!live_->isChecked()                      ? QString()
                              : r->seconds < LiveSearch::kLiveSeconds ? QStringLiteral(" — limits re-run live")
                                                                      : QStringLiteral(" — limits re-run live at this pace"))
                         .arg(record || r->cancelled ? QString() : QStringLiteral(" (live preview: not in the history)")));
    Q_EMIT searchFinished(!r->cancelled);
}

void SearchPanel::show(std::shared_ptr<const SearchResult> r, const DesignSpace& space)
{
    shown_ = r;
    shownSpace_ = space;
    static const std::vector<GenerationStats> kNone;
    const std::vector<GenerationStats>& history = r ? r->history : kNone;
    convergence_->showHistory(history);
    pareto_->showResult(r, space);
    // Playback starts at the run's last generation (a new live run puts it back there).
    const int last = history.empty() ? -1 : history.back().generation;
    playback_->setLastGeneration(last);
    convergence_->showGeneration(last);
    playback_->setSummary(pareto_->summary());
    winner_->showWinner(r, space);
    refreshMeasurement();
}

void SearchPanel::onSpaceChanged()
{
    // Issue 47: a run belongs to the space it was made in. It is kept while another space is
    // shown and comes back with its space; a space without a run starts empty (then previews).
    if (busy()) search_->cancel();
    if (measuring()) measureRunner_->cancel();
    if (shown_) keptRuns_[AppState::keyOf(shownSpace_)] = KeptRun{shown_, shownSpace_, measurement_};
    const DesignSpace space = state_->space();
    if (const auto k = keptRuns_.find(state_->spaceKey()); k != keptRuns_.end()) {
        measurement_ = k->second.measurement;
        const SearchResult& r = *k->second.result;
        liveTimer_->stop();   // its limits come back with it, not the workspace's starting ones
        const auto t = TrainingMemoryLimit::reportOf(r);
        limits_->setConstraints(r.constraints, t ? QString::fromStdString(t->pattern) : QString());
        options_->setOptions(r.options);
        show(k->second.result, k->second.space);
        status_->setText(QStringLiteral("The last run in space %1, kept while another space was open.")
                             .arg(QString::fromStdString(space.name).toHtmlEscaped()));
        return;
    }
    measurement_ = WinnerMeasurement();
    show(nullptr, space);
    status_->setText(QStringLiteral("No search in space %1 yet.").arg(QString::fromStdString(space.name).toHtmlEscaped()));
    // The preview as on the first show, once the predictor of the new space is in place.
    if (isVisible())
        QTimer::singleShot(0, this, [this] {
            if (!shown_ && oracle_ && !busy()) startSearch(false);
        });
    else
        shownOnce_ = false;
}

void SearchPanel::refreshMeasurement() { winner_->setMeasurement(measurement_, measuring(), measureProgress_); }

void SearchPanel::measureWinner(int images)
{
    if (measuring()) {
        measureRunner_->cancel();
        return;
    }
    if (!shown_ || !shown_->found) return;
    SearchResult r;   // the winner alone: what measureWinner reads
    r.best = shown_->best;
    r.found = true;
    r.oracle = shown_->oracle;
    const DesignSpace space = shownSpace_;
    const Workspace workspace = state_->workspace();
    measureProgress_ = QStringLiteral("measuring on the supernet…");
    measureRunner_->run(
        [r, space, workspace, images](const JobControl& job) {
            EvaluationRequest rq = supernetRequest(supernetTarget(workspace));
            rq.images = static_cast<std::size_t>(images);
            SupernetAccuracyOracle oracle(rq);
            oracle.setJobControl(job);
            return tinyscope::measureWinner(r, space, oracle);
        },
        [this](WinnerMeasurement m) {
            measurement_ = std::move(m);
            refreshMeasurement();
            Q_EMIT winnerMeasured(true);
        });
    refreshMeasurement();
}

void SearchPanel::useWinner()
{
    if (!shown_ || !shown_->found) return;
    if (AppState::keyOf(shownSpace_) != state_->spaceKey()) {   // onSpaceChanged keeps them apart; a guard with a reason
        status_->setText(QStringLiteral("This winner was found in space %1, not in the open space %2: switch back to its workspace, "
                                        "or run the search here.")
                             .arg(QString::fromStdString(shownSpace_.name).toHtmlEscaped(),
                                  QString::fromStdString(state_->space().name).toHtmlEscaped()));
        return;
    }
    try {
        shown_->best.config.validate(state_->space(), "winner");   // the space may have changed since
        state_->setSubnet(shown_->best.config);   // first: the inspector rebuilds its network on subnetChanged
        QString scheme;
        if (const auto t = TinyEngineTrainingLimit::reportOf(*shown_); t && t->trainable && !t->scheme.empty())
            scheme = QString::fromStdString(t->scheme);
        Q_EMIT state_->message(scheme.isEmpty() ? QStringLiteral("Selected the search winner (%1 % predicted)").arg(shown_->best.accuracy, 0, 'f', 3)
                                                : QStringLiteral("Selected the search winner (%1 % predicted) with its TinyEngine scheme %2")
                                                      .arg(shown_->best.accuracy, 0, 'f', 3)
                                                      .arg(scheme));
        if (!scheme.isEmpty()) Q_EMIT winnerSchemeChosen(scheme);
        Q_EMIT subnetUsed();
    } catch (const std::exception& e) {
        status_->setText(QString::fromUtf8(e.what()).toHtmlEscaped());
    }
}

bool SearchPanel::loadCandidate(std::size_t index)
{
    if (!shown_ || index >= shown_->evaluated.size()) return false;
    const SearchCandidate& c = shown_->evaluated[index];
    if (!c.hasConfig()) {
        const QString why = QStringLiteral("This stored run kept no config for that point (only the front's and the winner's): "
                                           "run the search again to load any of its subnets.");
        status_->setText(why);
        Q_EMIT state_->message(why);
        return false;
    }
    try {
        c.config.validate(state_->space(), "search point");   // the space may have changed since
        state_->setSubnet(c.config);
    } catch (const std::exception& e) {
        setError(QString::fromUtf8(e.what()));
        return false;
    }
    const QString what = QStringLiteral("Loaded into the Design-space panel: the generation-%1 %2 (%3 % predicted, %4 M MACs, %5 KB peak SRAM)")
                             .arg(c.generation)
                             .arg(c.origin == CandidateOrigin::unknown ? QStringLiteral("subnet") : QString::fromLatin1(originName(c.origin)) +
                                                                                                          QStringLiteral(" subnet"))
                             .arg(c.accuracy, 0, 'f', 3)
                             .arg(c.cost.millionMacs(), 0, 'f', 2)
                             .arg(c.cost.peakKB(), 0, 'f', 1);
    status_->setText(what.toHtmlEscaped());
    Q_EMIT state_->message(what);   // the Search tab stays: the status bar says where it went
    return true;
}

DeployDialog* SearchPanel::deployWinner()
{
    if (!shown_ || !shown_->found) return nullptr;
    ModelSource winner;
    try {
        // The workspace's supernet, or the shipped one with the winner transferred (the dialog's
        // title names the supernet's space).
        const SupernetTarget target = supernetTarget(state_->workspace());
        winner = ModelSource::subnet(target.space, transferConfig(shown_->best.config, shownSpace_, target.space), target.supernet);
    } catch (const std::exception& e) {
        status_->setText(QString::fromUtf8(e.what()).toHtmlEscaped());
        return nullptr;
    }
    auto* d = new DeployDialog(winner, QString::fromStdString(winner.asSubnet()->space.name) + QStringLiteral("-winner"), this);
    d->setBoard(state_->boardName());   // the workspace's board
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

void SearchPanel::reopen(int row)
{
    if (row < 0 || row >= static_cast<int>(history_->runs().size())) return;
    const SearchRunRecord& r = history_->runs()[static_cast<std::size_t>(row)];
    // Issue 19: a run re-opened in another space had its limits clamped to that space's ranges and
    // its winner marked invalid. The run's own (preset) space comes back with it.
    if (r.space != state_->space().name) {
        try {
            state_->setSpace(presetSpace(r.space), QString::fromStdString(r.space));
        } catch (const std::exception&) {
            status_->setText(QStringLiteral("This run was made in space %1, which is not a preset: open that space in the Design-space "
                                            "panel, then re-open the run.")
                                 .arg(QString::fromStdString(r.space).toHtmlEscaped()));
            return;
        }
    }
    StoredSearch stored;
    try {
        stored = storedSearch(r, state_->space());   // JSON -> typed, once, here
    } catch (const std::exception& e) {
        setError(QString::fromUtf8(e.what()));
        return;
    }
    const QString when = QString::fromStdString(r.when);
    options_->setOptions(stored.result.options);
    limits_->setConstraints(stored.result.constraints, QString::fromStdString(stored.trainingPattern));
    search_->setLastSeconds(stored.result.seconds);
    show(std::make_shared<const SearchResult>(std::move(stored.result)), state_->space());
    status_->setText(QStringLiteral("Re-opened the run of %1 (%2 of its %3 points plotted).").arg(when).arg(stored.sampled).arg(stored.evaluated));
}

bool SearchPanel::exportHistory(const QString& path)
{
    try {
        history_->exportTo(path);
        status_->setText(QStringLiteral("Exported %1 runs to %2").arg(history_->runs().size()).arg(path.toHtmlEscaped()));
        return true;
    } catch (const std::exception& e) {
        showErrorLater(this, QStringLiteral("Export runs"), QString::fromUtf8(e.what()));
        return false;
    }
}

}  // namespace tinyscope::ui
