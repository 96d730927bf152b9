#include "FineTunePane.h"

#include "ScreenFit.h"

#include "AppState.h"
#include "ChartLegend.h"
#include "Error.h"
#include "FineTuneCurve.h"
#include "FineTuneForm.h"
#include "FineTuneRunFolders.h"
#include "FlowLayout.h"
#include "InspectorFiles.h"
#include "JobProgressBar.h"
#include "JobRunner.h"
#include "Palette.h"
#include "Presentation.h"
#include "SchemeAccuracyScatter.h"
#include "TrainingLayerModel.h"
#include "io/DataPaths.h"
#include "UiText.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>

namespace tinyscope::ui {

namespace {

// The core's checkpoint of a run (FineTuneJob.cpp writes it per epoch and on cancel).
bool hasCheckpoint(const QString& folder) { return hasFineTuneCheckpoint(folder.toStdString()); }

}  // namespace

// What a run was started for: where its figures belong.
struct FineTunePane::Run {
    QString folder, key, model, modelName;
    int epochs = 0;
    bool analysis = false;   // the contribution analysis, not a fine-tuning run
};

FineTunePane::FineTunePane(AppState* state, TrainingLayerModel* layers, InspectorFiles* files, ModelKey modelKey, QWidget* parent)
    : QWidget(parent), state_(state), layers_(layers), files_(files), modelKey_(std::move(modelKey))
{
    form_ = new FineTuneForm;
    run_ = new QPushButton(QStringLiteral("Fine-tune the current scheme"));
    run_->setToolTip(QStringLiteral("Train the scheme on the data with the recipe above; a cancelled run resumes when run again"));
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setToolTip(QStringLiteral("Stop after the current batch; the checkpoint is kept and the next run resumes from it"));
    find_ = new QPushButton(QStringLiteral("Find the best scheme under the budget"));
    find_->setToolTip(QStringLiteral("Contribution analysis (short runs of each bias tail and weight update, resumable), then the "
                                     "scheme with the largest summed gain whose extra memory fits the SRAM budget minus the inference "
                                     "peak; applied to the table as one undoable step"));
    runner_ = new JobRunner(this);
    progress_ = new JobProgressBar(runner_, [](const QString& stage) { return stage + QStringLiteral(" — %p%"); });
    auto* actions = new QWidget;   // the buttons wrap on a narrow tab
    auto* flow = new FlowLayout(actions, 6, 4);
    flow->setContentsMargins(0, 0, 0, 0);
    for (QPushButton* b : {run_, find_, cancel_}) flow->addWidget(b);
    status_ = new QLabel;
    warning_ = new QLabel;
    for (QLabel* l : {status_, warning_}) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    curve_ = new FineTuneCurve;
    scatter_ = new SchemeAccuracyScatter;
    charts_ = new QSplitter(Qt::Vertical);
    ChartLegend* curveLegend = nullptr;
    charts_->addWidget(withWrappingLegend(curve_, curve_->chart(), &curveLegend));   // legends wrap, never cut
    curveLegend->setTitle(curve_->titleText());   // the title too (Qt Charts would cut a long one to "…")
    connect(curve_, &FineTuneCurve::titleChanged, curveLegend, &ChartLegend::setTitle);
    charts_->addWidget(scatter_);   // with its own wrapping legend
    // The tab scrolls vertically when it is too low for the controls and readable charts (a
    // 1280×720 window, presentation mode): the charts keep a least height instead of shrinking
    // until their axis titles are cut to "…" and their legends overlap the plot.
    auto* content = new QWidget;
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(verticalScrollArea(content));
    auto* root = new QVBoxLayout(content);
    root->setContentsMargins(4, 4, 4, 4);
    root->addWidget(form_);
    root->addWidget(actions);
    root->addWidget(progress_);
    root->addWidget(status_);
    root->addWidget(warning_);
    root->addWidget(charts_, 1);
    charts_->installEventFilter(this);   // its width picks side by side or stacked
    // Its height is the tab's rest, at least the least above (the charts' own hints would scroll the tab).
    charts_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Ignored);
    fitChartsHeight();
    root_ = QString::fromStdString(userStateDir()) + QStringLiteral("/finetune");
    connect(run_, &QPushButton::clicked, this, [this] { start(); });
    connect(find_, &QPushButton::clicked, this, [this] { findBestScheme(); });
    connect(cancel_, &QPushButton::clicked, this, &FineTunePane::cancel);
    connect(layers_, &TrainingLayerModel::schemeChanged, this, &FineTunePane::targetChanged);
    // Choosing other int8 weights says so in a message and changes the model the runs are of.
    connect(state_, &AppState::message, this, [this] { targetChanged(); });
    setBusy(false);
    setStatus(QStringLiteral("Fine-tunes the inspector's model with its scheme; runs are kept in %1.").arg(root_));
    targetChanged();
}

FineTunePane::~FineTunePane() = default;

void FineTunePane::fitChartsHeight()
{
    // The two charts side by side when each still gets ~14 text lines of width (1280×720: the tab
    // is ~560 px wide), else one above the other. Each keeps room for its legend and wrapped title
    // above a plot whose axis titles are not cut: ~17 text lines high (290 px at the normal font,
    // more in presentation mode, whose larger font reaches every widget); the tab scrolls if need be.
    const int line = fontMetrics().height();
    const int width = charts_->width();
    const Qt::Orientation o = width >= 2 * 14 * line || width > charts_->height() * 3 / 2 ? Qt::Horizontal : Qt::Vertical;
    if (o != charts_->orientation()) charts_->setOrientation(o);
    const int lines = Presentation::on() ? 22 : 17;   // larger text wraps the legends onto more lines
    charts_->setMinimumHeight(line * (o == Qt::Horizontal ? lines : 2 * lines));
}

void FineTunePane::changeEvent(QEvent* e)
{
    QWidget::changeEvent(e);
    if (e->type() == QEvent::FontChange) fitChartsHeight();
}

bool FineTunePane::eventFilter(QObject* watched, QEvent* e)
{
    if (watched == charts_ && e->type() == QEvent::Resize) fitChartsHeight();
    return QWidget::eventFilter(watched, e);
}

QString FineTunePane::modelName() const
{
    const QString key = modelKey_();
    return key == inspectorSubnetKey() ? inspectorSubnetEntryName() : key;
}

QString FineTunePane::folderModel() const
{
    const QString key = modelKey_();
    return key == inspectorSubnetKey() ? QStringLiteral("subnet") : key;
}

QString FineTunePane::modelIdentity() const
{
    const QString key = modelKey_();
    if (key == inspectorSubnetKey()) return QStringLiteral("subnet ") + QString::fromStdString(state_->subnet().toJson().dump());
    return key + QStringLiteral(" with ") + files_->weightsOf(key);
}

QString FineTunePane::targetKey() const
{
    return modelIdentity() + QLatin1Char('\n') + (layers_->hasNetwork() ? layers_->schemeDescription() : QString());
}

void FineTunePane::targetChanged()
{
    const QString key = modelKey_();
    scatter_->setModel(modelIdentity(), modelName());
    if (!curveKey_.isEmpty()) {
        const bool modelMoved = !curveKey_.startsWith(modelIdentity() + QLatin1Char('\n'));
        curve_->setStale(curveKey_ != targetKey(), modelMoved ? QStringLiteral("another model is selected")
                                                              : QStringLiteral("the scheme changed since this run"));
    }
    const bool seeded = key != inspectorSubnetKey() && key != inspectorOpenedKey() && files_->weightsOf(key).isEmpty();
    const QString warning = seeded ? QStringLiteral("%1 has no int8 weights chosen: it fine-tunes from seeded weights, so its accuracy "
                                                    "means nothing. Choose its params pickle with “Use int8 weights…”.")
                                         .arg(key)
                                   : QString();
    warning_->setVisible(seeded);
    warning_->setText(colouredHtml("status.warn-dark", warning));
    warning_->setProperty("plain", warning);
}

FineTuneRequest FineTunePane::baseRequest() const
{
    const ExportRequest er = files_->exportRequest(modelKey_());
    FineTuneRequest rq;
    rq.model = er.model;
    rq.scheme = er.scheme;
    rq.quantize = quantize_;
    rq.data = form_->data().toStdString();
    if (rq.data.empty()) throw InputError("data: give fashion-mnist or an image folder (class/*.png|jpg)");
    rq.recipe = form_->recipe(base_);
    // The model's input size: a design-space subnet's 28–36 px, a zoo model's 128.
    rq.recipe.resolution = rq.model.asSubnet() ? rq.model.asSubnet()->config.image_size : layers_->network().input.h;
    return rq;
}

FineTuneRequest FineTunePane::request() const
{
    FineTuneRequest rq = baseRequest();
    // The run keeps its scheme as a file beside its checkpoint (named so in its results).
    rq.out = runFolder(rq).toStdString();
    rq.scheme_name = rq.out + "/scheme.json";
    std::filesystem::create_directories(rq.out);
    rq.scheme.saveFile(rq.scheme_name);
    return rq;
}

QString FineTunePane::runFolder(const FineTuneRequest& rq) const
{
    return fineTuneRunFolder(root_, folderModel(), rq);
}

std::int64_t FineTunePane::extraBudgetBytes() const
{
    return static_cast<std::int64_t>(std::floor(budgetKB_ * 1024.0)) - layers_->ledger().inference_peak_bytes;
}

bool FineTunePane::findBestScheme()
{
    if (runner_->busy()) return false;
    ContributionOptions o = analysis_;
    std::int64_t budget = 0;
    try {
        if (!layers_->hasLedger() || !layers_->obstacle().isEmpty()) throw InputError("choose a model with an int8 training graph first");
        budget = extraBudgetBytes();
        try {
            bestSchemeUnderBudget(layers_->network(), {}, budget);   // before any run: the least any scheme needs
        } catch (const InfeasibleError& e) {
            throw InputError(QStringLiteral("the SRAM budget %1 KB leaves %2 for the extra memory after the inference peak %3: %4")
                                 .arg(budgetKB_, 0, 'f', 0)
                                 .arg(kbText(budget), kbText(layers_->ledger().inference_peak_bytes), QString::fromUtf8(e.what()))
                                 .toStdString());
        }
        o.base = baseRequest();
    } catch (const std::exception& e) {
        setStatus(QString::fromUtf8(e.what()), true);
        Q_EMIT runFinished(false);
        return false;
    }
    // The short runs: one epoch without augmentation (ContributionOptions::shortRecipe), on the
    // form's training and test images.
    const FineTuneRecipe formRecipe = o.base.recipe;
    o.base.recipe = ContributionOptions::shortRecipe(formRecipe);
    o.base.recipe.train_images = formRecipe.train_images;
    o.base.recipe.test_images = formRecipe.test_images;
    Run run;
    run.analysis = true;
    run.model = modelIdentity();
    run.folder = contributionFolder(root_, folderModel(), o);
    o.out = run.folder.toStdString();
    usePrepared(o.base);
    setStatus(QStringLiteral("Contribution analysis: short runs of each bias tail and weight update, kept in %1 …").arg(run.folder));
    const Post post = poster();
    setBusy(true);
    progress_->restart(QStringLiteral("contribution analysis"));
    runner_->run(
        [options = o, post](const JobControl& job) {
            ContributionOptions o = options;
            prepareInJob(o.base, job, post);
            return analyseContributions(o, job, [post](const ContributionRun& r, std::size_t done, std::size_t total) {
                const QString line = QStringLiteral("Contribution analysis, run %1 of %2: %3 — top-1 %4 %, gain %5 points")
                                         .arg(done)
                                         .arg(total)
                                         .arg(QString::fromStdString(r.what))
                                         .arg(r.top1, 0, 'f', 2)
                                         .arg(r.gain, 0, 'f', 2);
                post([line](FineTunePane* p) { p->setStatus(line); });
            });
        },
        [this, budget, run](ContributionResult c) { applyBest(c, budget, run); },
        [this, run](const JobFailure& f) { showFailure(f.message, f.cancelled, run); });
    return true;
}

void FineTunePane::applyBest(const ContributionResult& c, std::int64_t budgetBytes, const Run& run)
{
    setBusy(false);
    lastAnalysis_ = c;
    try {
        if (run.model != modelIdentity() || !layers_->hasNetwork())
            throw InputError("the model changed during the analysis; its runs are kept in " + run.folder.toStdString());
        const KnapsackChoice best = bestSchemeUnderBudget(layers_->network(), c.contributions, budgetBytes);
        layers_->applyScheme(best.resolved, QStringLiteral("best scheme under %1 KB").arg(budgetKB_, 0, 'f', 0));
        progress_->finish(QStringLiteral("found"));
        setStatus(QStringLiteral("Found under %1 KB: %2 — extra %3 + inference %4, summed gain %5 points from %6 short runs (kept in %7). "
                                 "Fine-tune it to verify.")
                      .arg(budgetKB_, 0, 'f', 0)
                      .arg(layers_->schemeDescription(), kbText(best.extra_bytes), kbText(layers_->ledger().inference_peak_bytes))
                      .arg(best.gain, 0, 'f', 2)
                      .arg(c.runs.size())
                      .arg(run.folder));
        Q_EMIT runFinished(true);
    } catch (const std::exception& e) {
        progress_->finish(QStringLiteral("failed"));
        setStatus(QString::fromUtf8(e.what()), true);
        Q_EMIT runFinished(false);
    }
}

bool FineTunePane::start()
{
    if (runner_->busy()) return false;
    FineTuneRequest rq;
    try {
        rq = request();
    } catch (const std::exception& e) {
        setStatus(QString::fromUtf8(e.what()), true);
        Q_EMIT runFinished(false);
        return false;
    }
    Run run;
    run.folder = QString::fromStdString(rq.out);
    run.key = targetKey();
    run.model = modelIdentity();
    run.modelName = modelName();
    run.epochs = rq.recipe.epochs;
    const bool resuming = hasCheckpoint(run.folder);
    curve_->start(QStringLiteral("%1 · QAS %2").arg(layers_->schemeDescription(), rq.recipe.qas ? QStringLiteral("on") : QStringLiteral("off")),
                  rq.recipe.epochs, run.folder == curveFolder_);
    curveKey_ = run.key;
    curveFolder_ = run.folder;
    setStatus(resuming ? QStringLiteral("Resuming the run from its checkpoint in %1 …").arg(run.folder)
                       : QStringLiteral("Fine-tuning %1 px images of %2; checkpoints in %3 …")
                             .arg(rq.recipe.resolution)
                             .arg(QString::fromStdString(rq.data), run.folder));
    const Post post = poster();
    const int generation = ++generation_;
    usePrepared(rq);
    setBusy(true);
    progress_->restart(QStringLiteral("starting"));
    // Every training step reports the epoch's running loss; the steps done while the GUI thread
    // is busy wait in `batches` and reach the curve together: one posted event at a time, one redraw.
    struct PendingBatches {
        std::mutex lock;
        std::vector<FineTuneBatch> items;
        bool posted = false;
    };
    auto batches = std::make_shared<PendingBatches>();
    FineTuneProgress progress;
    progress.onInitial = [post, generation](double top1) {
        post([top1, generation](FineTunePane* p) {
            if (p->generation_ == generation) p->curve_->setInitialTop1(top1);
        });
    };
    progress.onBatch = [post, generation, batches](const FineTuneBatch& b) {
        {
            const std::lock_guard<std::mutex> hold(batches->lock);
            batches->items.push_back(b);
            if (batches->posted) return;
            batches->posted = true;
        }
        post([generation, batches](FineTunePane* p) {
            std::vector<FineTuneBatch> items;
            {
                const std::lock_guard<std::mutex> hold(batches->lock);
                items.swap(batches->items);
                batches->posted = false;
            }
            if (p->generation_ == generation) p->curve_->addBatches(items);
        });
    };
    progress.onEpoch = [post, generation](const FineTuneEpoch& e) {
        post([e, generation](FineTunePane* p) {
            if (p->generation_ == generation) p->curve_->addEpoch(e);
        });
    };
    runner_->run(
        [request = rq, post, progress](const JobControl& job) {
            FineTuneRequest rq = request;
            prepareInJob(rq, job, post);
            return fineTune(rq, job, progress);
        },
        [this, run](FineTuneResult r) { showResult(r, run); },
        [this, run](const JobFailure& f) { showFailure(f.message, f.cancelled, run); });
    return true;
}

void FineTunePane::showResult(const FineTuneResult& r, const Run& run)
{
    setBusy(false);
    if (curveFolder_ == run.folder) {
        curve_->showEpochs(r.epochs);   // with a resumed run's earlier epochs
        if (r.recipe.evaluate_initial) curve_->setInitialTop1(r.initial_top1);
    }
    targetChanged();
    SchemeRun point;
    point.run = run.folder;
    point.model = run.model;
    point.modelName = run.modelName;
    point.scheme = QString::fromStdString(r.scheme_text);
    point.qas = r.recipe.qas;
    point.epochs = static_cast<int>(r.epochs.size());
    point.top1 = r.final_top1;
    point.extra_bytes = r.extra_bytes;
    point.inference_peak_bytes = r.inference_peak_bytes;
    point.total_bytes = r.total_bytes;
    scatter_->addRun(point);
    scatter_->setModel(modelIdentity(), modelName());
    progress_->finish(QStringLiteral("done"));
    setStatus(QStringLiteral("%1top-1 %2 % after %3 epoch(s) (the new head: %4 %), %5 training and %6 test images; extra memory %7, "
                             "with inference %8 (%9 s). Run kept in %10.")
                  .arg(r.resumed ? QStringLiteral("Resumed from the checkpoint: ") : QString())
                  .arg(r.final_top1, 0, 'f', 2)
                  .arg(r.epochs.size())
                  .arg(r.initial_top1, 0, 'f', 1)
                  .arg(r.train_images)
                  .arg(r.test_images)
                  .arg(kbText(r.extra_bytes), kbText(r.total_bytes))
                  .arg(r.seconds, 0, 'f', 1)
                  .arg(run.folder));
    Q_EMIT runFinished(true);
}

void FineTunePane::showFailure(const QString& message, bool cancelled, const Run& run)
{
    setBusy(false);
    if (cancelled) {
        progress_->finish(QStringLiteral("cancelled"));
        if (run.analysis)
            setStatus(QStringLiteral("Cancelled. The finished short runs in %1 are kept: finding again resumes the analysis.").arg(run.folder));
        else
            setStatus(hasCheckpoint(run.folder)
                      ? QStringLiteral("Cancelled. The checkpoint in %1 is kept: “Fine-tune the current scheme” again resumes it.").arg(run.folder)
                      : QStringLiteral("Cancelled before the first training step: nothing to resume."));
    } else {
        progress_->finish(QStringLiteral("failed"));
        setStatus(message, true);
    }
    Q_EMIT runFinished(false);
}

void FineTunePane::cancel()
{
    if (!runner_->busy()) return;
    runner_->cancel();
    setStatus(QStringLiteral("Cancelling after the current batch (the checkpoint is written first) …"));
}

namespace {

// What the prepared model depends on: the model and the quantization (the run identity's part).
std::string preparedKey(const FineTuneRequest& rq)
{
    const ModelSource& m = rq.model;
    const std::string space = m.asSubnet() ? m.asSubnet()->space.name : "";
    const std::uint64_t seed = m.asZoo() ? m.asZoo()->seed : 0;
    return Json{m.describe(), space, seed, rq.quantize.calib_data, rq.quantize.calib_images, rq.quantize.bn_images}.dump();
}

}  // namespace

void FineTunePane::usePrepared(FineTuneRequest& rq) const
{
    if (prepared_ && preparedKey_ == preparedKey(rq)) rq.prepared = prepared_;
}

void FineTunePane::keepPrepared(const FineTuneRequest& rq, std::shared_ptr<const PreparedModel> prepared)
{
    preparedKey_ = preparedKey(rq);
    prepared_ = std::move(prepared);
}

FineTunePane::Post FineTunePane::poster()
{
    return [self = QPointer<FineTunePane>(this)](std::function<void(FineTunePane*)> f) {
        QMetaObject::invokeMethod(qApp, [self, f] { if (self) f(self); }, Qt::QueuedConnection);   // `self` read on the GUI thread
    };
}

void FineTunePane::prepareInJob(FineTuneRequest& rq, const JobControl& job, const Post& post)
{
    if (rq.prepared) return;
    rq.prepared = std::make_shared<const PreparedModel>(prepareModel(rq.model, rq.quantize, job));
    post([rq](FineTunePane* p) { p->keepPrepared(rq, rq.prepared); });
}

bool FineTunePane::busy() const { return runner_->busy(); }

bool FineTunePane::waitForIdle(int timeoutMs) { return runner_->waitForIdle(timeoutMs); }

void FineTunePane::setBudgetKB(double kb)
{
    budgetKB_ = kb;
    scatter_->setBudgetKB(kb);
}

void FineTunePane::setBusy(bool busy)
{
    run_->setEnabled(!busy);
    find_->setEnabled(!busy);
    cancel_->setEnabled(busy);
    form_->setEnabled(!busy);
}

void FineTunePane::setStatus(const QString& text, bool error)
{
    status_->setText(error ? colouredHtml("status.error", text) : text.toHtmlEscaped());
    status_->setProperty("plain", text);
}

QString FineTunePane::statusText() const { return status_->property("plain").toString(); }

QString FineTunePane::warningText() const { return warning_->isHidden() ? QString() : warning_->property("plain").toString(); }

}  // namespace tinyscope::ui
