#include "SearchPanel.h"

#include "Palette.h"
#include "FlowLayout.h"
#include "AppState.h"
#include "ChartStyle.h"
#include "DeployDialog.h"
#include "DiagramExport.h"
#include "ErrorBox.h"
#include "LiveLineChart.h"
#include "SvgGraphView.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/measure/EvaluationJob.h"
#include "search/Feasibility.h"
#include "space/SpacePresets.h"
#include "search/TrainingMemoryLimit.h"
#include "viz/ArchDiagram.h"
#include "viz/GraphvizRenderer.h"
#include "space/SpaceTransfer.h"
#include "workspace/Workspace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QPointer>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

namespace {

constexpr int kSliderSteps = 1000;
constexpr double kLiveSeconds = 0.1;   // searches faster than this re-run while a limit moves

// The four costs a point can be plotted or coloured by: key in the JSON, axis title, scale.
struct Axis {
    const char* key;
    const char* title;
    double scale;    // value in the JSON × scale = value shown
    const char* limitKey;
};
const Axis kAxes[] = {
    {"macs", "MACs (M)", 1e-6, "millionMACs"},
    {"peak_activation_bytes", "peak SRAM (KB)", 1.0 / 1024, "KBPeakMemory"},
    {"params", "params (thousands)", 1e-3, "params"},
    {"flash_bytes", "flash (KB)", 1.0 / 1024, "KBFlash"},
};

// One evaluated point with all its costs.
struct Point {
    double cost[4];
    double accuracy;
};

QString nowIso() { return QDateTime::currentDateTime().toString(Qt::ISODate); }

}  // namespace

struct SearchPanel::LimitRow {
    std::shared_ptr<const ConstraintQuantity> quantity;
    QCheckBox* on = nullptr;
    QSlider* slider = nullptr;
    QDoubleSpinBox* spin = nullptr;
    double lo = 0, hi = 1;   // slider range: least and greatest value in the space

    int toSlider(double v) const
    {
        return static_cast<int>(std::lround(std::clamp((v - lo) / (hi - lo), 0.0, 1.0) * kSliderSteps));
    }
    double fromSlider(int s) const { return lo + (hi - lo) * s / kSliderSteps; }
};

struct SearchPanel::Job {
    DesignSpace space;
    Constraints constraints;
    SearchOptions options;
    std::shared_ptr<AccuracyOracle> oracle;
    SearchResult result;
    std::string error;
    bool infeasible = false;
    bool record = false;
};

SearchPanel::SearchPanel(AppState* state, const QString& historyPath, QWidget* parent) : QWidget(parent), state_(state)
{
    // ---- left: limits, algorithm, run
    auto* controls = new QWidget;
    auto* side = new QVBoxLayout(controls);
    buildLimits(side);
    buildTrainingLimit(side);

    auto* algoBox = new QGroupBox(QStringLiteral("Algorithm"));
    auto* form = new QFormLayout(algoBox);
    algorithm_ = new QComboBox;
    algorithm_->addItem(QStringLiteral("evolution"), QStringLiteral("evolution"));
    algorithm_->addItem(QStringLiteral("random"), QStringLiteral("random"));
    population_ = new QSpinBox;
    population_->setRange(1, 100000);
    generations_ = new QSpinBox;
    generations_->setRange(0, 1000000);
    parentRatio_ = new QDoubleSpinBox;
    mutationRatio_ = new QDoubleSpinBox;
    archProb_ = new QDoubleSpinBox;
    resProb_ = new QDoubleSpinBox;
    for (QDoubleSpinBox* b : {parentRatio_, mutationRatio_, archProb_, resProb_}) {
        b->setRange(0, 1);
        b->setSingleStep(0.05);
        b->setDecimals(2);
    }
    seed_ = new QSpinBox;
    seed_->setRange(0, 1000000000);
    form->addRow(QStringLiteral("Algorithm"), algorithm_);
    form->addRow(QStringLiteral("Population"), population_);
    form->addRow(QStringLiteral("Generations"), generations_);
    form->addRow(QStringLiteral("Parent ratio"), parentRatio_);
    form->addRow(QStringLiteral("Mutation ratio"), mutationRatio_);
    form->addRow(QStringLiteral("Arch / width mutate p"), archProb_);
    form->addRow(QStringLiteral("Resolution mutate p"), resProb_);
    form->addRow(QStringLiteral("Seed"), seed_);
    side->addWidget(algoBox);

    live_ = new QCheckBox(QStringLiteral("Live: re-run while a limit moves"));
    live_->setToolTip(QStringLiteral("Each limit change runs the search again. A search under 100 ms restarts at once; a slower one "
                                     "finishes first, then runs with the latest limits, so results follow the limits at its pace"));
    live_->setChecked(true);
    side->addWidget(live_);
    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(QStringLiteral("Run"));
    run_->setDefault(true);
    cancelButton_ = new QPushButton(QStringLiteral("Cancel"));
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
    oracleLabel_ = new QLabel;
    oracleLabel_->setWordWrap(true);
    oracleLabel_->setStyleSheet(QStringLiteral("color: %1").arg(paletteName("text.note")));
    side->addWidget(oracleLabel_);
    side->addStretch(1);

    // ---- charts: convergence and Pareto front
    convergence_ = new LiveLineChart(QStringLiteral("Convergence"), QStringLiteral("generation"), QStringLiteral("top-1 (%)"), false);
    convergence_->addSeries(QStringLiteral("best so far"), paletteColor("highlight"));
    convergence_->addSeries(QStringLiteral("population mean"), paletteColor("chart.series"));

    auto* paretoBox = new QWidget;
    auto* pl = new QVBoxLayout(paretoBox);
    pl->setContentsMargins(0, 0, 0, 0);
    auto* axisRow = new QHBoxLayout;
    axisRow->addWidget(new QLabel(QStringLiteral("Pareto front: top-1 against")));
    paretoAxis_ = new QComboBox;
    for (const Axis& a : kAxes) paretoAxis_->addItem(QString::fromLatin1(a.title));
    axisRow->addWidget(paretoAxis_);
    axisRow->addStretch(1);
    pl->addLayout(axisRow);
    pareto_ = new QChartView;
    pareto_->setRenderHint(QPainter::Antialiasing);
    pareto_->setChart(styledChart());
    pl->addWidget(pareto_, 1);

    // ---- winner: diagram, costs, use
    diagram_ = new SvgGraphView;
    diagram_->setMinimumWidth(300);
    diagram_->setToolTip(QStringLiteral("The winner's blocks; right-click saves the diagram"));
    offerDiagramSave(diagram_, [this] { return winnerDot_; }, [this] {
        return QStringLiteral("%1-winner").arg(QString::fromStdString(state_->space().name));
    });
    auto* winnerBox = new QWidget;
    auto* wl = new QVBoxLayout(winnerBox);
    wl->setContentsMargins(0, 0, 0, 0);
    winner_ = new QLabel(QStringLiteral("<i>no search yet</i>"));
    winner_->setTextFormat(Qt::RichText);
    winner_->setWordWrap(true);
    winner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    use_ = new QPushButton(QStringLiteral("Use this subnet"));
    use_->setToolTip(QStringLiteral("Select the winner in the Design-space panel"));
    use_->setEnabled(false);
    measure_ = new QPushButton(QStringLiteral("Measure on the supernet"));
    measure_->setToolTip(QStringLiteral("Top-1 of the winner on the workspace's supernet: all its test images, BN re-calibrated "
                                        "on 2,000 holdout images. A workspace without a supernet (Lab 3's VWW) measures on the "
                                        "Fashion-MNIST one, the winner transferred (same blocks) and labelled so"));
    measure_->setEnabled(false);
    deploy_ = new QPushButton(QStringLiteral("Deploy…"));
    deploy_->setToolTip(QStringLiteral("Write the winner, on the shipped supernet, as an int8 TFLite or float ONNX file and "
                                       "compare its memory on three engines (docs/DEPLOY.md)"));
    deploy_->setEnabled(false);
    wl->addWidget(winner_);
    wl->addWidget(wrappingRow({use_, measure_, deploy_}));   // wraps on a 1280×720 screen
    wl->addWidget(diagram_, 1);

    // ---- history of runs
    auto* historyBox = new QWidget;
    auto* hl = new QVBoxLayout(historyBox);
    hl->setContentsMargins(0, 0, 0, 0);
    table_ = new QTableWidget;
    table_->setColumnCount(10);
    table_->setHorizontalHeaderLabels({QStringLiteral("when"), QStringLiteral("algorithm"), QStringLiteral("limits"),
                                       QStringLiteral("seed"), QStringLiteral("P × G"), QStringLiteral("top-1 %"),
                                       QStringLiteral("MACs (M)"), QStringLiteral("SRAM (KB)"), QStringLiteral("params"),
                                       QStringLiteral("ms")});
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(20);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* reopenB = new QPushButton(QStringLiteral("Re-open"));
    auto* deleteB = new QPushButton(QStringLiteral("Delete"));
    auto* exportB = new QPushButton(QStringLiteral("Export…"));
    exportB->setToolTip(QStringLiteral("All runs as JSON, or one row per run as CSV"));
    hl->addWidget(wrappingRow({new QLabel(QStringLiteral("<b>Runs</b> (kept between sessions)")), reopenB, deleteB, exportB}));
    hl->addWidget(table_, 1);

    auto* charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(convergence_);
    charts->addWidget(paretoBox);
    charts->setStretchFactor(0, 2);
    charts->setStretchFactor(1, 3);
    auto* bottom = new QSplitter(Qt::Horizontal);
    bottom->addWidget(winnerBox);
    bottom->addWidget(historyBox);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(charts);
    right->addWidget(bottom);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);

    auto* scroll = new QScrollArea;
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(380);
    scroll->setMaximumWidth(460);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);

    liveTimer_ = new QTimer(this);
    liveTimer_->setSingleShot(true);
    liveTimer_->setInterval(30);
    connect(liveTimer_, &QTimer::timeout, this, [this] { startSearch(rerunRecord_); });
    connect(run_, &QPushButton::clicked, this, [this] { startSearch(true); });
    connect(cancelButton_, &QPushButton::clicked, this, &SearchPanel::cancel);
    connect(use_, &QPushButton::clicked, this, &SearchPanel::useWinner);
    connect(deploy_, &QPushButton::clicked, this, [this] { deployWinner(); });
    connect(measure_, &QPushButton::clicked, this, [this] { measureWinner(0); });
    connect(&measureWatcher_, &QFutureWatcher<void>::finished, this, [this] {
        measureProgress_.clear();
        measure_->setText(QStringLiteral("Measure on the supernet"));
        measure_->setEnabled(use_->isEnabled());
        refreshWinnerText();
    });
    connect(paretoAxis_, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this] { showPareto(shownSample_, shownPareto_, shownBest_, shownConstraints_); });
    connect(reopenB, &QPushButton::clicked, this, [this] { reopen(table_->currentRow()); });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { reopen(row); });
    connect(deleteB, &QPushButton::clicked, this, [this] {
        const int row = table_->currentRow();
        if (row < 0) return;
        history_->remove(static_cast<std::size_t>(row));
        refreshHistoryTable();
    });
    connect(exportB, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Export runs"), QStringLiteral("search-runs.csv"),
                                                 QStringLiteral("CSV (*.csv);;JSON (*.json)"));
        if (!p.isEmpty()) exportHistory(p);
    });
    connect(&watcher_, &QFutureWatcher<void>::finished, this, &SearchPanel::finishSearch);
    connect(state_, &AppState::spaceChanged, this, [this] {
        syncRanges();
        applyWorkspaceLimits();
    });

    setOptions(SearchOptions());
    syncRanges();
    setLimit("params", 1000000, false);
    setLimit("KBFlash", 1000, false);
    applyWorkspaceLimits();
    setHistoryPath(historyPath);
}

SearchPanel::~SearchPanel()
{
    cancel_ = true;
    measureCancel_ = true;
    watcher_.waitForFinished();
    measureWatcher_.waitForFinished();
}

void SearchPanel::buildLimits(QVBoxLayout* into)
{
    auto* box = new QGroupBox(QStringLiteral("Limits"));
    auto* grid = new QGridLayout(box);
    int row = 0;
    for (const auto& q : Constraints::builtinQuantities()) {
        auto r = std::make_unique<LimitRow>();
        r->quantity = q;
        QString unit = QString::fromStdString(q->unit);
        r->on = new QCheckBox(QString::fromStdString(q->label));
        r->on->setToolTip(QStringLiteral("limit key %1").arg(QString::fromStdString(q->key)));
        r->spin = new QDoubleSpinBox;
        r->spin->setDecimals(q->key == "params" ? 0 : (q->key == "millionMACs" ? 2 : 1));
        r->spin->setSuffix(unit.isEmpty() ? QString() : QLatin1Char(' ') + unit);
        r->spin->setMinimumWidth(110);
        r->slider = new QSlider(Qt::Horizontal);
        r->slider->setRange(0, kSliderSteps);
        grid->addWidget(r->on, row, 0);
        grid->addWidget(r->spin, row, 1);
        grid->addWidget(r->slider, row + 1, 0, 1, 2);
        row += 2;
        LimitRow* raw = r.get();
        connect(r->spin, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this, raw](double v) {
            QSignalBlocker b(raw->slider);
            raw->slider->setValue(raw->toSlider(v));
            onLimitEdited(false);
        });
        connect(r->slider, &QSlider::valueChanged, this, [this, raw](int s) {
            QSignalBlocker b(raw->spin);
            raw->spin->setValue(raw->fromSlider(s));
            onLimitEdited(raw->slider->isSliderDown());
        });
        connect(r->slider, &QSlider::sliderReleased, this, [this] { onLimitEdited(false); });
        connect(r->on, &QCheckBox::toggled, this, [this, raw](bool on) {
            raw->spin->setEnabled(on);
            raw->slider->setEnabled(on);
            onLimitEdited(false);
        });
        limits_.push_back(std::move(r));
    }
    into->addWidget(box);
}

void SearchPanel::buildTrainingLimit(QVBoxLayout* into)
{
    trainBox_ = new QGroupBox(QStringLiteral("Fine-tuning memory on the device"));
    trainBox_->setCheckable(true);
    trainBox_->setChecked(false);
    trainBox_->setToolTip(QStringLiteral("inference peak + extra memory of sparse-update training with the pattern "
                                         "(docs/TRAINING_INSPECTOR.md), limit key %1")
                              .arg(QString::fromLatin1(TrainingMemoryLimit::kKey)));
    auto* form = new QFormLayout(trainBox_);
    trainBudget_ = new QDoubleSpinBox;
    trainBudget_->setRange(1, 100000);
    trainBudget_->setDecimals(1);
    trainBudget_->setSingleStep(8);
    trainBudget_->setSuffix(QStringLiteral(" KB"));
    trainBudget_->setValue(320);
    trainPattern_ = new QLineEdit(QStringLiteral("bias-only:12"));
    trainPattern_->setToolTip(QStringLiteral("bias-only[:N] | last:K | full | pw1:K@R[,R…] | classifier, joined by +\n"
                                             "e.g. bias-only:12+pw1:3@1/4"));
    trainNote_ = new QLabel;
    trainNote_->setWordWrap(true);
    trainNote_->setTextFormat(Qt::RichText);
    form->addRow(QStringLiteral("Budget"), trainBudget_);
    form->addRow(QStringLiteral("Scheme pattern"), trainPattern_);
    form->addRow(trainNote_);
    connect(trainBox_, &QGroupBox::toggled, this, [this] { onLimitEdited(false); });
    connect(trainBudget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { onLimitEdited(false); });
    connect(trainPattern_, &QLineEdit::textChanged, this, [this] {
        checkTrainingPattern();
        onLimitEdited(false);
    });
    checkTrainingPattern();
    into->addWidget(trainBox_);
}

void SearchPanel::checkTrainingPattern()
{
    try {
        TrainingSchemePattern::parse(trainPattern_->text().toStdString());
        trainNote_->setText(QStringLiteral("<span style='color:%1'>inference peak + extra memory of the pattern ≤ budget</span>").arg(paletteName("text.note")));
    } catch (const std::exception& e) {
        trainNote_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName("search.error"), QString::fromUtf8(e.what()).toHtmlEscaped()));
    }
}

void SearchPanel::setTrainingLimit(double kb, const QString& pattern, bool enabled)
{
    restoring_ = true;
    trainBudget_->setValue(kb);
    trainPattern_->setText(pattern);
    trainBox_->setChecked(enabled);
    restoring_ = false;
    checkTrainingPattern();
}

void SearchPanel::syncRanges()
{
    // The slider spans what the space can reach; the spin box goes beyond, so an impossible
    // limit can be typed and is explained.
    restoring_ = true;
    for (auto& r : limits_) {
        QuantityRange range = quantityRange(state_->space(), *r->quantity);
        r->lo = range.least;
        r->hi = std::max(range.greatest, range.least * 1.01);
        const double v = r->spin->value();
        r->spin->setRange(r->quantity->key == "params" ? 1000 : 1, r->hi * 2);
        r->spin->setSingleStep(r->quantity->key == "params" ? 10000 : (r->quantity->key == "millionMACs" ? 1 : 5));
        r->spin->setValue(v);
        r->slider->setValue(r->toSlider(v));
        r->slider->setToolTip(QStringLiteral("%1 to %2 %3 in this space")
                                  .arg(QString::fromStdString(formatQuantity(r->lo)), QString::fromStdString(formatQuantity(r->hi)),
                                       QString::fromStdString(r->quantity->unit)));
    }
    restoring_ = false;
}

void SearchPanel::applyWorkspaceLimits()
{
    // Limits of one space rarely mean anything in another (VWW's 250 KB is more than the whole
    // Fashion-MNIST space needs): a workspace brings its own starting limits.
    for (const auto& [key, value] : state_->workspace().search_limits) setLimit(key, value, true);
}

void SearchPanel::setLimit(const std::string& key, double value, bool enabled)
{
    for (auto& r : limits_) {
        if (r->quantity->key != key) continue;
        restoring_ = true;
        r->spin->setValue(value);
        r->on->setChecked(enabled);
        r->spin->setEnabled(enabled);
        r->slider->setEnabled(enabled);
        restoring_ = false;
        return;
    }
    throw InputError("unknown constraint '" + key + "'");
}

Constraints SearchPanel::constraints() const
{
    Constraints c;
    for (const auto& r : limits_)
        if (r->on->isChecked()) c.set(r->quantity, r->spin->value());
    if (trainBox_->isChecked()) {
        // After the cheap limits, so they reject a draw before its training memory is priced.
        const std::string pattern = trainPattern_->text().toStdString();
        const std::string key = state_->space().name + '\n' + pattern;
        if (!trainLimit_ || key != trainLimitKey_) {
            trainLimit_ = std::make_shared<TrainingMemoryLimit>(state_->space(), pattern);   // InputError on a bad pattern
            trainLimitKey_ = key;
        }
        c.set(trainLimit_->quantity(), trainBudget_->value());
    }
    return c;
}

SearchOptions SearchPanel::options() const
{
    SearchOptions o;
    o.algorithm = algorithm_->currentData().toString().toStdString();
    o.population = population_->value();
    o.generations = generations_->value();
    o.parent_ratio = parentRatio_->value();
    o.mutation_ratio = mutationRatio_->value();
    o.arch_mutate_prob = archProb_->value();
    o.resolution_mutate_prob = resProb_->value();
    o.seed = static_cast<std::uint64_t>(seed_->value());
    return o;
}

void SearchPanel::setOptions(const SearchOptions& o)
{
    restoring_ = true;
    algorithm_->setCurrentIndex(algorithm_->findData(QString::fromStdString(o.algorithm)));
    population_->setValue(o.population);
    generations_->setValue(o.generations);
    parentRatio_->setValue(o.parent_ratio);
    mutationRatio_->setValue(o.mutation_ratio);
    archProb_->setValue(o.arch_mutate_prob);
    resProb_->setValue(o.resolution_mutate_prob);
    seed_->setValue(static_cast<int>(o.seed));
    restoring_ = false;
}

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
    history_ = std::make_unique<SearchHistory>(p.toStdString());
    if (!history_->loadWarning().empty())
        status_->setText(QStringLiteral("Run history: %1").arg(QString::fromStdString(history_->loadWarning()).toHtmlEscaped()));
    refreshHistoryTable();
}

bool SearchPanel::busy() const { return watcher_.isRunning(); }

void SearchPanel::showEvent(QShowEvent* e)
{
    QWidget::showEvent(e);
    if (shownOnce_) return;
    shownOnce_ = true;
    if (!result_ && oracle_ && !busy()) QTimer::singleShot(0, this, [this] {
            if (!result_ && !busy()) startSearch(false);
        });
}

void SearchPanel::cancel()
{
    rerunPending_ = false;
    cancel_ = true;
}

void SearchPanel::setBusy(bool on)
{
    run_->setEnabled(!on && oracle_);
    cancelButton_->setEnabled(on);
}

void SearchPanel::onLimitEdited(bool fromDrag)
{
    if (restoring_) return;
    // Issue 19: live mode used to switch itself off, mid-drag, once a search took 100 ms or more.
    if (!live_->isChecked()) {
        if (!busy()) status_->setText(QStringLiteral("Limits changed: press Run."));
        return;
    }
    rerunRecord_ = rerunRecord_ || !fromDrag;
    liveTimer_->start();
}

void SearchPanel::startSearch(bool record)
{
    if (busy()) {
        // A newer request replaces the running one (live slider moves): a fast search is cancelled
        // and restarted; a slow one finishes first (else it would never finish during a drag).
        if (lastSeconds_ < kLiveSeconds) cancel_ = true;
        rerunPending_ = true;
        rerunRecord_ = rerunRecord_ || record;
        return;
    }
    rerunRecord_ = false;
    if (!oracle_) {
        status_->setText(QStringLiteral("No accuracy predictor: train or load one in the Predictor panel."));
        Q_EMIT searchFinished(false);
        return;
    }
    auto job = std::make_shared<Job>();
    job->space = state_->space();
    job->oracle = oracle_;
    job->record = record;
    try {
        job->constraints = constraints();
        job->options = options();
        job->options.validate();
        requireFeasible(job->space, job->constraints);   // exact and fast: answer at once
    } catch (const InfeasibleError& e) {
        status_->setText(QStringLiteral("<span style='color:%1'><b>Impossible:</b> %2</span>")
                             .arg(paletteName("search.error"), QString::fromUtf8(e.what()).toHtmlEscaped()));
        Q_EMIT searchFinished(false);
        return;
    } catch (const std::exception& e) {
        status_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName("search.error"), QString::fromUtf8(e.what()).toHtmlEscaped()));
        Q_EMIT searchFinished(false);
        return;
    }
    convergence_->clear();
    convergence_->setXSpan(job->options.generations);
    progress_->setRange(0, std::max(1, job->options.generations + 1));
    progress_->setValue(0);
    cancel_ = false;
    job_ = job;
    setBusy(true);
    status_->setText(QStringLiteral("Searching: %1…").arg(QString::fromStdString(job->constraints.describe())));
    watcher_.setFuture(QtConcurrent::run([this, job] {
        SearchCallbacks cb;
        cb.cancel = &cancel_;
        const int every = std::max(1, job->options.generations / 200);   // at most ~200 chart updates
        cb.onGeneration = [this, every](const GenerationStats& g, const SearchCandidate& best) {
            if (g.generation % every != 0) return;
            QMetaObject::invokeMethod(this, [this, g, best] { onGeneration(g, best); }, Qt::QueuedConnection);
        };
        try {
            job->result = runSearch(job->space, *job->oracle, job->constraints, job->options, cb);
        } catch (const InfeasibleError& e) {
            job->infeasible = true;
            job->error = e.what();
        } catch (const std::exception& e) {
            job->error = e.what();
        }
    }));
}

void SearchPanel::onGeneration(const GenerationStats& g, const SearchCandidate& best)
{
    convergence_->append(0, g.generation, g.best);
    convergence_->append(1, g.generation, g.mean);
    progress_->setValue(g.generation + 1);
    status_->setText(QStringLiteral("generation %1: best %2 %").arg(g.generation).arg(best.accuracy, 0, 'f', 3));
}

void SearchPanel::finishSearch()
{
    std::shared_ptr<Job> job = std::move(job_);
    setBusy(false);
    if (rerunPending_) {
        rerunPending_ = false;
        startSearch(rerunRecord_);
        return;
    }
    if (!job) return;
    if (!job->error.empty()) {
        status_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName("search.error"), QString::fromStdString(job->error).toHtmlEscaped()));
        Q_EMIT searchFinished(false);
        return;
    }
    result_ = std::make_unique<SearchResult>(std::move(job->result));
    const SearchResult& r = *result_;
    lastSeconds_ = r.seconds;
    progress_->setValue(progress_->maximum());
    SearchRunRecord rec = SearchRunRecord::fromResult(r, job->space.name, nowIso().toStdString());
    if (job->record && !r.cancelled) {
        history_->add(rec);
        refreshHistoryTable();
        table_->selectRow(0);
    }
    showResult(rec.result, &r.evaluated);
    status_->setText(QStringLiteral("%1 %2 subnets in %3 ms%4%5")
                         .arg(r.cancelled ? QStringLiteral("Cancelled after") : QStringLiteral("Done:"))
                         .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(r.evaluated.size()))))
                         .arg(r.seconds * 1e3, 0, 'f', 1)
                         .arg(!live_->isChecked()         ? QString()
                              : r.seconds < kLiveSeconds ? QStringLiteral(" — limits re-run live")
                                                         : QStringLiteral(" — limits re-run live at this pace"))
                         .arg(job->record || r.cancelled ? QString() : QStringLiteral(" (live preview: not in the history)")));
    Q_EMIT searchFinished(!r.cancelled);
}

void SearchPanel::showResult(const Json& result, const std::vector<SearchCandidate>* evaluated)
{
    Json sample = result.contains("sample") ? result["sample"] : Json::object();
    if (evaluated && evaluated->size() <= 20000) {
        // The live result: plot every point, not the stored sample.
        Json rows = Json::array();
        for (const SearchCandidate& c : *evaluated)
            rows.push_back({c.cost.macs, c.cost.peak_activation_bytes, c.cost.params, c.cost.flash_bytes, c.accuracy, c.generation});
        sample["rows"] = rows;
    }
    showConvergence(result["history"]);
    shownSample_ = sample;
    shownPareto_ = result["pareto"];
    shownBest_ = result["best"];
    shownConstraints_ = result["constraints"];
    showPareto(shownSample_, shownPareto_, shownBest_, shownConstraints_);
    showWinner(shownBest_);
    const Json& w = result.contains("warnings") ? result["warnings"] : Json::array();
    if (!w.empty()) {
        QStringList lines;
        for (const Json& s : w) lines << QString::fromStdString(s.get<std::string>()).toHtmlEscaped();
        winner_->setText(winner_->text() + QStringLiteral("<br><span style='color:%1'>⚠ %2</span>").arg(paletteName("status.warn"), lines.join(QStringLiteral("<br>⚠ "))));
    }
}

void SearchPanel::showConvergence(const Json& history)
{
    convergence_->clear();
    convergence_->setXSpan(history.empty() ? 1 : history.back()["generation"].get<double>());
    for (const Json& g : history) {
        convergence_->append(0, g["generation"].get<double>(), g["best"].get<double>());
        convergence_->append(1, g["generation"].get<double>(), g["mean"].get<double>());
    }
}

void SearchPanel::showPareto(const Json& sample, const Json& pareto, const Json& best, const Json& constraints)
{
    const int xi = std::max(0, paretoAxis_->currentIndex());
    const int ci = xi == 1 ? 0 : 1;   // colour by peak SRAM, or by MACs when SRAM is on the x axis
    const Axis& ax = kAxes[xi];
    std::vector<Point> pts;
    if (sample.contains("rows"))
        for (const Json& r : sample["rows"]) {
            Point p;
            for (int k = 0; k < 4; ++k) p.cost[k] = r[static_cast<std::size_t>(k)].get<double>() * kAxes[k].scale;
            p.accuracy = r[4].get<double>();
            pts.push_back(p);
        }
    auto fromCandidate = [](const Json& c) {
        Point p;
        for (int k = 0; k < 4; ++k) p.cost[k] = c[kAxes[k].key].get<double>() * kAxes[k].scale;
        p.accuracy = c["predicted_accuracy"].get<double>();
        return p;
    };
    if (pareto.is_array())
        for (const Json& c : pareto) pts.push_back(fromCandidate(c));

    QChart* c = styledChart();
    c->legend()->setAlignment(Qt::AlignRight);
    paretoPoints_ = static_cast<int>(pts.size());
    double xlo = 1e300, xhi = -1e300, ylo = 1e300, yhi = -1e300, clo = 1e300, chi = -1e300;
    for (const Point& p : pts) {
        xlo = std::min(xlo, p.cost[xi]);
        xhi = std::max(xhi, p.cost[xi]);
        ylo = std::min(ylo, p.accuracy);
        yhi = std::max(yhi, p.accuracy);
        clo = std::min(clo, p.cost[ci]);
        chi = std::max(chi, p.cost[ci]);
    }
    auto* x = new QValueAxis;
    x->setTitleText(QString::fromLatin1(ax.title));
    auto* y = new QValueAxis;
    y->setTitleText(QStringLiteral("predicted top-1 (%)"));
    y->setLabelFormat(QStringLiteral("%.1f"));
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    auto attach = [&](QAbstractSeries* s) {
        c->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
    };
    // Colour = the other cost, in five bands (viridis).
    static const QColor band[5] = {paletteColor("pareto.band0"), paletteColor("pareto.band1"), paletteColor("pareto.band2"),
                                   paletteColor("pareto.band3"), paletteColor("pareto.band4")};
    if (!pts.empty()) {
        const double width = chi > clo ? (chi - clo) / 5 : 1;
        std::vector<QScatterSeries*> series(5, nullptr);
        std::vector<QList<QPointF>> lists(5);
        for (const Point& p : pts) {
            int b = std::clamp(static_cast<int>((p.cost[ci] - clo) / width), 0, 4);
            lists[static_cast<std::size_t>(b)].append(QPointF(p.cost[xi], p.accuracy));
        }
        const QString unit = ci == 1 ? QStringLiteral("KB SRAM") : QStringLiteral("M MACs");
        for (int b = 0; b < 5; ++b) {
            if (lists[static_cast<std::size_t>(b)].isEmpty()) continue;
            auto* s = new QScatterSeries;
            s->setName(QStringLiteral("%1–%2 %3").arg(clo + b * width, 0, 'f', 0).arg(clo + (b + 1) * width, 0, 'f', 0).arg(unit));
            s->setMarkerSize(5);
            s->setColor(band[b]);
            s->setBorderColor(Qt::transparent);
            s->append(lists[static_cast<std::size_t>(b)]);
            attach(s);
        }
        // The front for this axis: most accurate at each cost, swept by ascending cost.
        std::vector<Point> sorted = pts;
        std::sort(sorted.begin(), sorted.end(), [xi](const Point& a, const Point& b) {
            return a.cost[xi] < b.cost[xi] || (a.cost[xi] == b.cost[xi] && a.accuracy > b.accuracy);
        });
        auto* front = new QLineSeries;
        front->setName(QStringLiteral("Pareto front"));
        QPen fp(paletteColor("chart.front"));
        fp.setWidth(2);
        front->setPen(fp);
        double bestAcc = -1e300;
        for (const Point& p : sorted)
            if (p.accuracy > bestAcc) {
                if (front->count() > 0) front->append(p.cost[xi], bestAcc);   // step
                front->append(p.cost[xi], p.accuracy);
                bestAcc = p.accuracy;
            }
        attach(front);
    }
    // The limit on the plotted cost.
    if (constraints.is_object() && constraints.contains(ax.limitKey)) {
        double lim = constraints[ax.limitKey].get<double>();
        if (xi == 2) lim *= 1e-3;   // params are plotted in thousands
        auto* line = new QLineSeries;
        line->setName(QStringLiteral("limit %1").arg(QString::fromStdString(formatQuantity(lim))));
        QPen lp(paletteColor("search.error"));
        lp.setStyle(Qt::DashLine);
        lp.setWidth(2);
        line->setPen(lp);
        line->append(lim, ylo - 1);
        line->append(lim, yhi + 1);
        attach(line);
        xhi = std::max(xhi, lim);
    }
    if (best.is_object()) {
        const Point b = fromCandidate(best);
        auto* w = new QScatterSeries;
        w->setName(QStringLiteral("winner"));
        w->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        w->setMarkerSize(13);
        w->setColor(paletteColor("highlight"));
        w->setBorderColor(Qt::black);
        w->append(b.cost[xi], b.accuracy);
        attach(w);
    }
    if (xlo <= xhi) {
        const double pad = (xhi - xlo) * 0.04 + 1e-9;
        x->setRange(std::max(0.0, xlo - pad), xhi + pad);
        y->setRange(ylo - 0.2, yhi + 0.2);
        x->applyNiceNumbers();
    }
    replaceChart(pareto_, c);
}

void SearchPanel::showWinner(const Json& best)
{
    winnerDot_.clear();
    if (!best.is_object()) {
        winner_->setText(QStringLiteral("<i>no subnet</i>"));
        use_->setEnabled(false);
        deploy_->setEnabled(false);
        measure_->setEnabled(measuring());
        diagram_->setSvg(QByteArray());
        winnerBase_ = winner_->text();
        return;
    }
    const QString top1 = QString::number(best["predicted_accuracy"].get<double>(), 'f', 3);
    winner_->setText(QStringLiteral("<b>Winner</b>: %1 % predicted top-1 (generation %2)<br>"
                                    "MACs %3 M · peak SRAM %4 KB · params %5 · flash %6 KB")
                         .arg(top1)
                         .arg(best["generation"].get<int>())
                         .arg(best["macs"].get<double>() / 1e6, 0, 'f', 3)
                         .arg(best["peak_activation_bytes"].get<double>() / 1024, 0, 'f', 1)
                         .arg(QString::fromStdString(groupThousands(best["params"].get<std::int64_t>())))
                         .arg(best["flash_bytes"].get<double>() / 1024, 0, 'f', 1));
    if (best.contains(TrainingMemoryLimit::kReportKey)) {
        const Json& t = best[TrainingMemoryLimit::kReportKey];
        auto kb = [&t](const char* k) { return t[k].get<double>() / 1024.0; };
        winner_->setText(winner_->text() + QStringLiteral("<br>fine-tuning with <tt>%1</tt>: inference working set %2 KB + extra %3 KB = "
                                                          "<b>%4 KB</b> (budget %5 KB)")
                                               .arg(QString::fromStdString(t["pattern"].get<std::string>()).toHtmlEscaped())
                                               .arg(kb("inference_peak_bytes"), 0, 'f', 1)
                                               .arg(kb("extra_bytes"), 0, 'f', 1)
                                               .arg(kb("total_bytes"), 0, 'f', 1)
                                               .arg(kb("budget_bytes"), 0, 'f', 1));
    }
    try {
        const SubnetConfig cfg = SubnetConfig::fromJson(best["config"], state_->space(), "winner");
        const CostReport report = CostModel(state_->space()).report(cfg);
        const std::string dot = archDiagramDot(state_->space(), cfg, costedDiagramOptions(report, best["predicted_accuracy"].get<double>()));
        diagram_->setSvg(QByteArray::fromStdString(renderDotToSvg(dot)));
        winnerDot_ = dot;
        use_->setEnabled(true);
    } catch (const std::exception& e) {
        // A stored run of another space.
        diagram_->setSvg(QByteArray());
        use_->setEnabled(false);
        winner_->setText(winner_->text() + QStringLiteral("<br><i>%1</i>").arg(QString::fromUtf8(e.what()).toHtmlEscaped()));
    }
    measure_->setEnabled(use_->isEnabled() || measuring());
    deploy_->setEnabled(use_->isEnabled());
    winnerBase_ = winner_->text();
    refreshWinnerText();
}

void SearchPanel::refreshWinnerText()
{
    QString line;
    if (measuring()) {
        line = QStringLiteral("<br><i>%1</i>").arg(measureProgress_.toHtmlEscaped());
    } else if (!measurement_.measured_by.empty() && shownBest_.is_object() && measurement_.search_space == state_->space().name &&
               shownBest_["config"] == measurement_.searched.toJson()) {
        const WinnerMeasurement& m = measurement_;
        line = QStringLiteral("<br><b>measured %1 %</b> top-1 on %2 test images (supernet of %3%4 at %5 px%6)")
                   .arg(m.measured, 0, 'f', 2)
                   .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(m.evaluation.images))))
                   .arg(m.transferred ? QStringLiteral("the same blocks in ") : QString())
                   .arg(QString::fromStdString(m.supernet_space))
                   .arg(m.measured_config.image_size)
                   .arg(m.transferred ? QStringLiteral("; another task than the predictor's: compare rankings, not the numbers")
                                      : QString());
    }
    winner_->setText(winnerBase_ + line);
}

void SearchPanel::measureWinner(int images)
{
    if (measuring()) {
        measureCancel_ = true;
        return;
    }
    if (!shownBest_.is_object()) return;
    SearchResult r;
    try {
        r.best.config = SubnetConfig::fromJson(shownBest_["config"], state_->space(), "winner");
    } catch (const std::exception&) {
        return;   // a stored run of another space: nothing to measure here
    }
    r.found = true;
    r.best.accuracy = shownBest_["predicted_accuracy"].get<double>();
    r.oracle = oracle_ ? oracle_->describe() : std::string();
    const DesignSpace space = state_->space();
    const Workspace workspace = state_->workspace();
    measureCancel_ = false;
    measureProgress_ = QStringLiteral("measuring on the supernet…");
    measure_->setText(QStringLiteral("Cancel measuring"));
    measure_->setEnabled(true);
    refreshWinnerText();
    QPointer<SearchPanel> self(this);
    measureWatcher_.setFuture(QtConcurrent::run([this, self, r, space, workspace, images] {
        bool ok = false;
        WinnerMeasurement m;
        QString error;
        try {
            const SupernetTarget target = supernetTarget(workspace);
            EvaluationRequest rq = supernetRequest(target.supernet);
            rq.space = target.space;
            rq.images = static_cast<std::size_t>(images);
            SupernetAccuracyOracle oracle(rq);
            JobControl job;
            job.cancel = &measureCancel_;
            job.progress = [self](std::size_t done, std::size_t total, const std::string& stage) {
                const QString text = QStringLiteral("measuring: %1 %2/%3").arg(QString::fromStdString(stage)).arg(done).arg(total);
                QMetaObject::invokeMethod(
                    self, [self, text] {
                        if (!self || !self->measuring()) return;
                        self->measureProgress_ = text;
                        self->refreshWinnerText();
                    },
                    Qt::QueuedConnection);
            };
            oracle.setJobControl(job);
            m = tinyscope::measureWinner(r, space, oracle);
            ok = true;
        } catch (const CancelledError&) {
            error = QStringLiteral("Measuring cancelled.");
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            self, [self, ok, m, error] {
                if (!self) return;
                if (ok) self->measurement_ = m;
                else Q_EMIT self->state_->message(error);
                Q_EMIT self->winnerMeasured(ok);
            },
            Qt::QueuedConnection);
    }));
}

void SearchPanel::useWinner()
{
    if (!shownBest_.is_object()) return;
    try {
        state_->setSubnet(SubnetConfig::fromJson(shownBest_["config"], state_->space(), "winner"));
        Q_EMIT state_->message(QStringLiteral("Selected the search winner (%1 % predicted)")
                                   .arg(shownBest_["predicted_accuracy"].get<double>(), 0, 'f', 3));
        Q_EMIT subnetUsed();
    } catch (const std::exception& e) {
        status_->setText(QString::fromUtf8(e.what()).toHtmlEscaped());
    }
}

DeployDialog* SearchPanel::deployWinner()
{
    if (!shownBest_.is_object()) return nullptr;
    ModelSpec spec;
    try {
        // The workspace's supernet, or the shipped one with the winner transferred (the dialog's
        // title names the supernet's space).
        const SupernetTarget target = supernetTarget(state_->workspace());
        spec.supernet = target.supernet;
        spec.space = target.space.name;
        spec.subnet = transferConfig(SubnetConfig::fromJson(shownBest_["config"], state_->space(), "winner"), state_->space(), target.space);
    } catch (const std::exception& e) {
        status_->setText(QString::fromUtf8(e.what()).toHtmlEscaped());
        return nullptr;
    }
    auto* d = new DeployDialog(spec, QString::fromStdString(spec.space) + QStringLiteral("-winner"), this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

void SearchPanel::refreshHistoryTable()
{
    const auto& runs = history_->runs();
    table_->setRowCount(static_cast<int>(runs.size()));
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const SearchRunRecord& r = runs[i];
        const Json& res = r.result;
        const Json& b = res["best"];
        const int row = static_cast<int>(i);
        auto set = [&](int col, const QString& text) { table_->setItem(row, col, new QTableWidgetItem(text)); };
        set(0, QDateTime::fromString(QString::fromStdString(r.when), Qt::ISODate).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        set(1, QString::fromStdString(res["algorithm"].get<std::string>()));
        set(2, QString::fromStdString(r.limitsText()));
        set(3, QString::number(res["options"]["seed"].get<long long>()));
        set(4, QStringLiteral("%1 × %2").arg(res["options"]["population_size"].get<int>()).arg(res["options"]["max_time_budget"].get<int>()));
        if (b.is_object()) {
            set(5, QString::number(b["predicted_accuracy"].get<double>(), 'f', 3));
            set(6, QString::number(b["macs"].get<double>() / 1e6, 'f', 2));
            set(7, QString::number(b["peak_activation_bytes"].get<double>() / 1024, 'f', 1));
            set(8, QString::fromStdString(groupThousands(b["params"].get<std::int64_t>())));
        }
        set(9, QString::number(res["seconds"].get<double>() * 1e3, 'f', 1));
    }
}

int SearchPanel::historyRows() const { return table_->rowCount(); }
int SearchPanel::convergencePoints() const { return convergence_->count(0); }
QString SearchPanel::statusText() const { return status_->text(); }

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
    try {
        setOptions(searchOptionsFromJson(JsonPath("history", r.result["options"])));
        const Json definitions = r.result.contains("constraint_definitions") ? r.result["constraint_definitions"] : Json::object();
        const Constraints c = TrainingMemoryLimit::restore(state_->space(), r.result["constraints"], definitions, "history");
        for (auto& lr : limits_) {
            const Limit* l = c.find(lr->quantity->key);
            setLimit(lr->quantity->key, l ? l->max : lr->spin->value(), l != nullptr);
        }
        const Limit* t = c.find(TrainingMemoryLimit::kKey);
        setTrainingLimit(t ? t->max : trainBudget_->value(),
                         t ? QString::fromStdString(definitions[TrainingMemoryLimit::kKey]["pattern"].get<std::string>()) : trainPattern_->text(),
                         t != nullptr);
    } catch (const std::exception& e) {
        status_->setText(QString::fromUtf8(e.what()).toHtmlEscaped());
    }
    result_.reset();
    showResult(r.result, nullptr);
    lastSeconds_ = r.result["seconds"].get<double>();
    status_->setText(QStringLiteral("Re-opened the run of %1 (%2 of its %3 points plotted).")
                         .arg(QString::fromStdString(r.when))
                         .arg(r.result["sample"]["rows"].size())
                         .arg(r.result["sample"]["of"].get<long long>()));
}

bool SearchPanel::exportHistory(const QString& path)
{
    try {
        if (path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive)) writeFileAtomic(path.toStdString(), history_->toCsv());
        else writeJsonFile(path.toStdString(), history_->toJson(), 1);
        status_->setText(QStringLiteral("Exported %1 runs to %2").arg(history_->runs().size()).arg(path.toHtmlEscaped()));
        return true;
    } catch (const std::exception& e) {
        showErrorLater(this, QStringLiteral("Export runs"), QString::fromUtf8(e.what()));
        return false;
    }
}

}  // namespace tinyscope::ui
