#include "PredictorPanel.h"

#include "AppState.h"
#include "ErrorBox.h"
#include "JobRunner.h"
#include "LiveLineChart.h"
#include "Palette.h"
#include "PredictorCardView.h"
#include "PredictorRecipeForm.h"
#include "PredictorScatter.h"
#include "nn/predictor/PredictorWork.h"
#include "ScreenFit.h"
#include "TourActions.h"

#include "workspace/Workspace.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

namespace tinyscope::ui {

struct PredictorPanel::JobResult {
    Job kind = Job::Evaluate;
    int checkSubnets = 0, checkImages = 0;
    PredictorCheck check;
    std::string checkNote;   // MAE after the offset, what was measured and how
    QString dataPath;
    DesignSpace space;
    PredictorRecipe recipe;
    std::shared_ptr<const AccuracyDataset> dataset;
    std::shared_ptr<AccuracyPredictor> predictor;
    std::vector<double> predicted, measured;
    SupernetTarget target;   // where a check measures (the workspace's supernet, or a labelled transfer)
};

PredictorPanel::PredictorPanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    auto* scroll = new QScrollArea;
    scroll->setWidget(makeControls());
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(360);
    scroll->setMaximumWidth(460);
    fitSideColumn(scroll);   // no horizontal scrolling of the controls on a 1280×720 screen
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(makeCharts());
    split->setStretchFactor(1, 1);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);

    jobs_ = new JobRunner(this);
    connectControls();
    loadShipped();
}

PredictorPanel::~PredictorPanel() = default;   // jobs_ cancels and waits

void PredictorPanel::addTourActions(TourActions& actions)
{
    actions.addTarget("predictor-card", [this] { return findChild<PredictorCardView*>(); });
    actions.addTarget("predictor-scatter", [this] { return findChild<PredictorScatter*>(); });
}

QWidget* PredictorPanel::makeControls()
{
    auto* controls = new QWidget;
    auto* side = new QVBoxLayout(controls);
    form_ = new PredictorRecipeForm;
    side->addWidget(form_);
    auto* actions = new QHBoxLayout;
    train_ = new QPushButton(QStringLiteral("Train"));
    evaluate_ = new QPushButton(QStringLiteral("Evaluate"));
    evaluate_->setToolTip(QStringLiteral("Predicted vs measured on the dataset's held-out split"));
    cancelButton_ = new QPushButton(QStringLiteral("Cancel"));
    train_->setToolTip(QStringLiteral("Train the predictor on the dataset with the recipe (off the GUI thread)"));
    evaluate_->setToolTip(QStringLiteral("Measure the predictor on the held-out pairs"));
    cancelButton_->setToolTip(QStringLiteral("Stop the job"));
    cancelButton_->setEnabled(false);
    actions->addWidget(train_);
    actions->addWidget(evaluate_);
    actions->addWidget(cancelButton_);
    side->addLayout(actions);
    auto* checkRow = new QHBoxLayout;
    check_ = new QPushButton(QStringLiteral("Check on the supernet"));
    check_->setToolTip(QStringLiteral("Predict fresh random subnets and measure them on the shipped supernet (test images): "
                                      "are the predictions ranked like the measurements?"));
    checkCount_ = new QSpinBox;
    checkCount_->setRange(3, 1000);
    checkCount_->setValue(20);
    checkCount_->setSuffix(QStringLiteral(" subnets"));
    checkCount_->setToolTip(QStringLiteral("How many fresh random subnets the check predicts and measures"));
    checkRow->addWidget(check_, 1);
    checkRow->addWidget(checkCount_);
    side->addLayout(checkRow);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    side->addWidget(progress_);
    status_ = new QLabel;
    status_->setWordWrap(true);
    side->addWidget(status_);
    card_ = new PredictorCardView;
    side->addWidget(card_);
    side->addStretch(1);
    return controls;
}

QWidget* PredictorPanel::makeCharts()
{
    loss_ = new LiveLineChart(QStringLiteral("Training: L1 loss and validation MAE per epoch"), QStringLiteral("epoch"),
                              QStringLiteral("accuracy points"), true);
    loss_->addSeries(QStringLiteral("train L1 (points)"), paletteColor("chart.series"), true);
    loss_->addSeries(QStringLiteral("validation MAE (points)"), paletteColor("highlight"), true);
    loss_->setMinimumHeight(220);
    scatter_ = new PredictorScatter;
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(loss_);
    right->addWidget(scatter_);
    right->setStretchFactor(0, 2);
    right->setStretchFactor(1, 3);
    return right;
}

void PredictorPanel::connectControls()
{
    connect(train_, &QPushButton::clicked, this, &PredictorPanel::startTraining);
    connect(evaluate_, &QPushButton::clicked, this, &PredictorPanel::startEvaluation);
    connect(check_, &QPushButton::clicked, this, [this] { startCheck(checkCount_->value(), 0); });
    connect(cancelButton_, &QPushButton::clicked, this, &PredictorPanel::cancel);
    connect(card_, &PredictorCardView::loadRequested, this, &PredictorPanel::loadPredictor);
    connect(card_, &PredictorCardView::saveRequested, this, &PredictorPanel::savePredictor);
    connect(jobs_, &JobRunner::progress, this, [this](qint64 done, qint64 total, const QString& stage) {
        progress_->setValue(total ? static_cast<int>(1000 * done / total) : 0);
        if (!stage.isEmpty()) status_->setText(stage);
    });
    connect(state_, &AppState::spaceChanged, this, &PredictorPanel::onSpaceChanged);
}

void PredictorPanel::loadShipped()
{
    // Out of the box: the predictor shipped for the space, and its dataset if it is at hand.
    predictor_ = shippedPredictor(QStringLiteral("The shipped predictor did not load: "));
    if (!form_->restoreDatasetPath()) form_->offerDataOrigin(predictor_.get());
    showCard();
}

std::shared_ptr<AccuracyPredictor> PredictorPanel::shippedPredictor(const QString& errorPrefix)
{
    const std::string shipped = state_->workspace().predictor;
    if (shipped.empty()) return nullptr;
    try {
        return std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shipped, state_->space()));
    } catch (const std::exception& e) {
        status_->setText(errorPrefix + QString::fromUtf8(e.what()));
        return nullptr;
    }
}

void PredictorPanel::onSpaceChanged()
{
    // A predictor only serves the space it was made for: keep it if it fits, else take the
    // one shipped for the new space, if any.
    if (predictor_ && predictor_->card().space_fingerprint == spaceFingerprint(state_->space())) return;
    predictor_ = shippedPredictor(QString());
    // The dataset of the previous space does not fit this one: offer the new predictor's own.
    form_->offerDataOrigin(predictor_.get());
    showCard();
    scatter_->clear();
    Q_EMIT predictorChanged();
}

QString PredictorPanel::datasetPath() const { return form_->datasetPath(); }
void PredictorPanel::setDatasetPath(const QString& path) { form_->setDatasetPath(path); }
PredictorRecipe PredictorPanel::recipe() const { return form_->recipe(); }
void PredictorPanel::setRecipe(const PredictorRecipe& r) { form_->setRecipe(r); }

bool PredictorPanel::busy() const { return jobs_->busy(); }

void PredictorPanel::cancel() { jobs_->cancel(); }

void PredictorPanel::setBusy(bool on, const QString& what)
{
    train_->setEnabled(!on);
    evaluate_->setEnabled(!on);
    check_->setEnabled(!on);
    cancelButton_->setEnabled(on);
    if (on) {
        progress_->setValue(0);
        status_->setText(what);
    }
}

bool PredictorPanel::refuse(const QString& why, const QString& dialogTitle)
{
    lastError_ = why;
    if (dialogTitle.isEmpty())
        status_->setText(lastError_);
    else
        showErrorLater(this, dialogTitle, lastError_);
    Q_EMIT jobFinished(false);
    return false;
}

void PredictorPanel::startTraining() { runJob(Job::Train); }
void PredictorPanel::startEvaluation() { runJob(Job::Evaluate); }

void PredictorPanel::startCheck(int subnets, int images)
{
    if (busy()) return;
    if (!predictor_) {
        refuse(QStringLiteral("No predictor to check: train or load one."));
        return;
    }
    lastError_.clear();
    auto job = std::make_shared<JobResult>();
    job->kind = Job::Check;
    job->space = state_->space();
    job->predictor = predictor_;
    job->checkSubnets = subnets;
    job->checkImages = images;
    try {
        job->target = supernetTarget(state_->workspace());
    } catch (const std::exception& e) {
        refuse(QString::fromUtf8(e.what()));
        return;
    }
    setBusy(true, QStringLiteral("Measuring %1 fresh subnets…").arg(subnets));
    startJob(job, [job](const JobControl& control) {
        SupernetCheck done =
            checkOnSupernet(job->target, job->space, *job->predictor, job->checkSubnets, job->checkImages, kCheckSeed, control);
        job->check = std::move(done.check);
        job->checkNote = std::move(done.note);
        job->predicted = job->check.predicted;
        job->measured = job->check.measured;
    });
}

void PredictorPanel::startJob(const std::shared_ptr<JobResult>& job, std::function<void(const JobControl&)> work)
{
    jobs_->run(std::move(work), [this, job] { finishJob(*job, nullptr); }, [this, job](const JobFailure& f) { finishJob(*job, &f); });
}

void PredictorPanel::runJob(Job kind)
{
    if (busy()) return;
    lastError_.clear();
    const bool train = kind == Job::Train;
    auto job = std::make_shared<JobResult>();
    job->kind = kind;
    job->dataPath = form_->datasetPath().trimmed();
    job->space = state_->space();
    try {
        job->recipe = form_->validatedRecipe();
    } catch (const std::exception& e) {
        refuse(QString::fromUtf8(e.what()), QStringLiteral("Training recipe"));
        return;
    }
    if (job->dataPath.isEmpty()) {
        refuse(QStringLiteral("Choose an accuracy dataset folder first."));
        return;
    }
    if (!train && !predictor_) {
        refuse(QStringLiteral("No predictor to evaluate: train or load one."));
        return;
    }
    if (dataset_ && datasetLoadedFrom_ == job->dataPath) job->dataset = dataset_;
    if (!train) job->predictor = predictor_;
    if (train) {
        loss_->clear();
        loss_->setXSpan(job->recipe.epochs * job->recipe.ensemble);
    }
    setBusy(true, train ? QStringLiteral("Training…") : QStringLiteral("Evaluating…"));
    auto post = [self = QPointer<PredictorPanel>(this)](std::function<void(PredictorPanel*)> f) {
        // Through qApp: `self` is read on the GUI thread only.
        QMetaObject::invokeMethod(qApp, [self, f] { if (self) f(self); }, Qt::QueuedConnection);
    };
    startJob(job, [job, post](const JobControl& control) {
        if (!job->dataset) {
            control.report(0, 1000, "Reading the dataset…");
            job->dataset = std::make_shared<AccuracyDataset>(AccuracyDataset::load(job->dataPath.toStdString(), job->space));
        }
        const QString info = QString::fromStdString(datasetSummary(*job->dataset));
        post([info](PredictorPanel* p) { p->form_->setDatasetInfo(info); });
        if (job->kind == Job::Train) {
            control.report(0, 1000, "Training…");
            job->predictor = trainPredictor(job->space, *job->dataset, job->recipe, control, [post](const EpochRecord& e, int member) {
                post([e, member](PredictorPanel* p) { p->onEpoch(e, member); });
            });
        }
        PredictedMeasured held = heldOutPredictions(*job->predictor, *job->dataset);
        job->predicted = std::move(held.predicted);
        job->measured = std::move(held.measured);
    });
}

void PredictorPanel::onEpoch(const EpochRecord& e, int member)
{
    const double x = member * form_->epochs() + e.epoch;
    loss_->append(0, x, e.train_loss);
    if (e.validation.count > 0) loss_->append(1, x, e.validation.mae);
    status_->setText(QStringLiteral("epoch %1%2: train L1 %3, validation MAE %4, τ %5 (%6 s)")
                         .arg(e.epoch)
                         .arg(member > 0 ? QStringLiteral(" of member %1").arg(member + 1) : QString())
                         .arg(e.train_loss, 0, 'f', 4)
                         .arg(e.validation.mae, 0, 'f', 4)
                         .arg(e.validation.kendall_tau, 0, 'f', 4)
                         .arg(e.seconds, 0, 'f', 1));
}

void PredictorPanel::finishJob(JobResult& job, const JobFailure* failure)
{
    setBusy(false, QString());
    if (job.dataset) {
        dataset_ = job.dataset;
        datasetLoadedFrom_ = job.dataPath;
        form_->setDatasetLoadedFrom(job.dataPath);
    }
    if (failure && failure->cancelled) {
        status_->setText(job.kind == Job::Check ? QStringLiteral("Check cancelled.") : QStringLiteral("Cancelled; the predictor is unchanged."));
        progress_->setValue(0);
        Q_EMIT jobFinished(false);
        return;
    }
    if (failure) {
        lastError_ = failure->message;
        status_->setText(lastError_);
        showErrorLater(this, job.kind == Job::Train ? QStringLiteral("Training") : job.kind == Job::Check ? QStringLiteral("Check") : QStringLiteral("Evaluation"),
                       lastError_);
        Q_EMIT jobFinished(false);
        return;
    }
    progress_->setValue(1000);
    if (job.kind == Job::Check) {
        lastCheck_ = job.check;
        scatter_->setMeasuredBy(QString::fromStdString(job.check.measured_by));
        status_->setText(QStringLiteral("Checked on %1 fresh subnets (seed %2).").arg(job.measured.size()).arg(kCheckSeed));
        scatter_->showPoints(job.predicted, job.measured, QString::fromStdString(job.checkNote));
    } else if (job.kind == Job::Train) {
        predictor_ = job.predictor;
        PredictorRecipeForm::rememberDatasetPath(job.dataPath);
        status_->setText(QStringLiteral("Trained in %1 s. Save it to keep it; the Search panel uses it now.")
                             .arg(predictor_->card().training_seconds, 0, 'f', 1));
        showCard();
        Q_EMIT predictorChanged();
        scatter_->showPoints(job.predicted, job.measured);
    } else {
        status_->setText(QStringLiteral("Evaluated on %1 held-out pairs.").arg(job.measured.size()));
        scatter_->showPoints(job.predicted, job.measured);
    }
    Q_EMIT jobFinished(true);
}

void PredictorPanel::showCard()
{
    card_->showPredictor(predictor_.get());
    if (!predictor_) return;
    // The card keeps the per-epoch record of the run that made it.
    const PredictorCard& c = predictor_->card();
    loss_->clear();
    loss_->setXSpan(static_cast<double>(c.history.size()));
    for (const EpochRecord& e : c.history) {
        loss_->append(0, e.epoch, e.train_loss);
        loss_->append(1, e.epoch, e.validation.mae);
    }
}

bool PredictorPanel::loadPredictor(const QString& path)
{
    try {
        predictor_ = std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(path.toStdString(), state_->space()));
    } catch (const std::exception& e) {
        lastError_ = QString::fromUtf8(e.what());
        showErrorLater(this, QStringLiteral("Load predictor"), lastError_);
        return false;
    }
    showCard();
    scatter_->clear();
    status_->setText(QStringLiteral("Loaded %1; press Evaluate to see it against the dataset.").arg(path));
    Q_EMIT predictorChanged();
    return true;
}

bool PredictorPanel::savePredictor(const QString& path)
{
    if (!predictor_) return false;
    try {
        predictor_->save(path.toStdString());
    } catch (const std::exception& e) {
        lastError_ = QString::fromUtf8(e.what());
        showErrorLater(this, QStringLiteral("Save predictor"), lastError_);
        return false;
    }
    showCard();
    status_->setText(QStringLiteral("Saved %1").arg(QString::fromStdString(predictor_->path())));
    return true;
}

int PredictorPanel::epochPoints() const { return loss_->count(1); }
int PredictorPanel::scatterPoints() const { return scatter_->points(); }
QString PredictorPanel::metricsText() const { return scatter_->metricsText(); }

}  // namespace tinyscope::ui
