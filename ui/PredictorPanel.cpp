#include "PredictorPanel.h"

#include "Palette.h"
#include "ScreenFit.h"
#include "AppState.h"
#include "ChartStyle.h"
#include "ErrorBox.h"
#include "LiveLineChart.h"

#include "Error.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/measure/EvaluationJob.h"
#include "nn/predictor/PredictorCheck.h"
#include "space/ArchSampler.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace tinyscope::ui {

struct PredictorPanel::JobResult {
    Job kind = Job::Evaluate;
    bool train = false;
    int checkSubnets = 0, checkImages = 0;
    PredictorCheck check;
    std::string checkNote;   // MAE after the offset, what was measured and how
    QString dataPath;
    DesignSpace space;
    PredictorRecipe recipe;
    std::shared_ptr<const AccuracyDataset> dataset;
    std::shared_ptr<AccuracyPredictor> predictor;
    std::vector<double> predicted, measured;
    std::string error;
    bool cancelled = false;
};

namespace {

const QString kDatasetKey = QStringLiteral("predictor/dataset");

// The card's dataset path, resolved against the data root when relative (the README's command
// runs from the repository root with ../shared beside it).
QString resolveOrigin(const std::string& origin)
{
    if (origin.empty()) return QString();
    QString o = QString::fromStdString(origin);
    if (QDir::isAbsolutePath(o)) return o;
    return QDir::cleanPath(QDir(QString::fromStdString(dataRoot())).filePath(o));
}

}  // namespace

PredictorPanel::PredictorPanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    // ---- left: dataset, recipe, actions, the current predictor
    auto* controls = new QWidget;
    auto* side = new QVBoxLayout(controls);

    auto* dataBox = new QGroupBox(QStringLiteral("Accuracy dataset"));
    auto* dl = new QVBoxLayout(dataBox);
    auto* pathRow = new QHBoxLayout;
    dataPath_ = new QLineEdit;
    dataPath_->setPlaceholderText(QStringLiteral("folder with src/*_acc_table.json or acc.dict"));
    auto* browse = new QPushButton(QStringLiteral("Browse…"));
    pathRow->addWidget(dataPath_, 1);
    pathRow->addWidget(browse);
    dl->addLayout(pathRow);
    dataInfo_ = new QLabel(QStringLiteral("not loaded"));
    dataInfo_->setWordWrap(true);
    dl->addWidget(dataInfo_);
    side->addWidget(dataBox);

    auto* recipeBoxG = new QGroupBox(QStringLiteral("Training recipe"));
    auto* form = new QFormLayout(recipeBoxG);
    recipeBox_ = new QComboBox;
    recipeBox_->addItem(QStringLiteral("Tinyscope default (cosine lr 2e-3, batch 128)"), QStringLiteral("default"));
    recipeBox_->addItem(QStringLiteral("Lab 3 (Adam 1e-3 constant, batch 256)"), QStringLiteral("lab"));
    epochs_ = new QSpinBox;
    epochs_->setRange(1, 1000);
    lr_ = new QDoubleSpinBox;
    lr_->setDecimals(5);
    lr_->setRange(0.00001, 1.0);
    lr_->setSingleStep(0.0005);
    schedule_ = new QComboBox;
    schedule_->addItems({QStringLiteral("constant"), QStringLiteral("cosine")});
    batch_ = new QSpinBox;
    batch_->setRange(1, 100000);
    seed_ = new QSpinBox;
    seed_->setRange(0, 1000000);
    validation_ = new QDoubleSpinBox;
    validation_->setRange(0.0, 0.9);
    validation_->setSingleStep(0.05);
    ensemble_ = new QSpinBox;
    ensemble_->setRange(1, 16);
    ensemble_->setToolTip(QStringLiteral("Members averaged at prediction: more accurate, slower search"));
    threads_ = new QSpinBox;
    threads_->setRange(1, 64);
    form->addRow(QStringLiteral("Recipe"), recipeBox_);
    form->addRow(QStringLiteral("Epochs"), epochs_);
    form->addRow(QStringLiteral("Learning rate"), lr_);
    form->addRow(QStringLiteral("Schedule"), schedule_);
    form->addRow(QStringLiteral("Batch size"), batch_);
    form->addRow(QStringLiteral("Seed"), seed_);
    form->addRow(QStringLiteral("Validation fraction"), validation_);
    form->addRow(QStringLiteral("Ensemble"), ensemble_);
    form->addRow(QStringLiteral("Threads"), threads_);
    side->addWidget(recipeBoxG);

    auto* actions = new QHBoxLayout;
    train_ = new QPushButton(QStringLiteral("Train"));
    evaluate_ = new QPushButton(QStringLiteral("Evaluate"));
    evaluate_->setToolTip(QStringLiteral("Predicted vs measured on the dataset's held-out split"));
    cancelButton_ = new QPushButton(QStringLiteral("Cancel"));
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

    auto* predBox = new QGroupBox(QStringLiteral("Current predictor"));
    auto* pl = new QVBoxLayout(predBox);
    card_ = new QLabel;
    card_->setWordWrap(true);
    card_->setTextFormat(Qt::RichText);
    card_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    pl->addWidget(card_);
    auto* files = new QHBoxLayout;
    auto* load = new QPushButton(QStringLiteral("Load…"));
    auto* save = new QPushButton(QStringLiteral("Save…"));
    files->addWidget(load);
    files->addWidget(save);
    pl->addLayout(files);
    side->addWidget(predBox);
    side->addStretch(1);

    // ---- right: loss / MAE per epoch, predicted vs measured
    loss_ = new LiveLineChart(QStringLiteral("Training: L1 loss and validation MAE per epoch"), QStringLiteral("epoch"),
                              QStringLiteral("accuracy points"), true);
    loss_->addSeries(QStringLiteral("train L1 (points)"), paletteColor("chart.series"), true);
    loss_->addSeries(QStringLiteral("validation MAE (points)"), paletteColor("highlight"), true);
    loss_->setMinimumHeight(220);

    scatterView_ = new QChartView;
    scatterView_->setRenderHint(QPainter::Antialiasing);
    scatterView_->setChart(styledChart(QStringLiteral("Predicted vs measured top-1 on the held-out split")));
    metrics_ = new QLabel;
    metrics_->setTextFormat(Qt::RichText);
    metrics_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    metrics_->setWordWrap(true);
    metrics_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);   // long notes wrap, never widen the window

    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(loss_);
    auto* scatterBox = new QWidget;
    auto* sl = new QVBoxLayout(scatterBox);
    sl->setContentsMargins(0, 0, 0, 0);
    sl->addWidget(scatterView_, 1);
    sl->addWidget(metrics_);
    right->addWidget(scatterBox);
    right->setStretchFactor(0, 2);
    right->setStretchFactor(1, 3);

    auto* scroll = new QScrollArea;
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(360);
    scroll->setMaximumWidth(460);
    fitSideColumn(scroll);   // no horizontal scrolling of the controls on a 1280×720 screen
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);

    setRecipe(PredictorRecipe::standard());
    connect(recipeBox_, qOverload<int>(&QComboBox::activated), this, [this] {
        PredictorRecipe r = PredictorRecipe::named(recipeBox_->currentData().toString().toStdString());
        r.seed = static_cast<std::uint64_t>(seed_->value());
        setRecipe(r);
    });
    connect(browse, &QPushButton::clicked, this, [this] {
        QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Accuracy dataset folder"), dataPath_->text());
        if (!dir.isEmpty()) setDatasetPath(dir);
    });
    connect(dataPath_, &QLineEdit::editingFinished, this, [this] { QSettings().setValue(kDatasetKey, dataPath_->text()); });
    connect(dataPath_, &QLineEdit::textChanged, this, [this](const QString& path) {
        // The line under the path describes that path's data, or none yet.
        if (path != datasetLoadedFrom_) dataInfo_->setText(QStringLiteral("not loaded yet: read by Train or Evaluate"));
    });
    connect(train_, &QPushButton::clicked, this, &PredictorPanel::startTraining);
    connect(evaluate_, &QPushButton::clicked, this, &PredictorPanel::startEvaluation);
    connect(check_, &QPushButton::clicked, this, [this] { startCheck(checkCount_->value(), 0); });
    connect(cancelButton_, &QPushButton::clicked, this, &PredictorPanel::cancel);
    connect(load, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Load predictor"), QString(),
                                                 QStringLiteral("Tinyscope predictor (*.json *.bin)"));
        if (!p.isEmpty()) loadPredictor(p);
    });
    connect(save, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Save predictor"), QStringLiteral("predictor.bin"),
                                                 QStringLiteral("Tinyscope predictor (*.bin)"));
        if (!p.isEmpty()) savePredictor(p);
    });
    connect(&watcher_, &QFutureWatcher<void>::finished, this, &PredictorPanel::finishJob);
    connect(state_, &AppState::spaceChanged, this, [this] {
        // A predictor only serves the space it was made for: keep it if it fits, else take the
        // one shipped for the new space, if any.
        if (predictor_ && predictor_->card().space_fingerprint == spaceFingerprint(state_->space())) return;
        predictor_.reset();
        const std::string shipped = state_->workspace().predictor;
        try {
            if (!shipped.empty())
                predictor_ = std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shipped, state_->space()));
        } catch (const std::exception& e) {
            status_->setText(QString::fromUtf8(e.what()));
        }
        // The dataset of the previous space does not fit this one: offer the new predictor's own.
        if (predictor_) {
            const QString data = resolveOrigin(predictor_->card().data_origin);
            if (QFileInfo::exists(data)) dataPath_->setText(data);
        }
        showCard();
        showScatter({}, {});
        Q_EMIT predictorChanged();
    });

    // Out of the box: the predictor shipped for the space, and its dataset if it is at hand.
    const std::string shipped = state_->workspace().predictor;
    if (!shipped.empty()) {
        try {
            predictor_ = std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shipped, state_->space()));
        } catch (const std::exception& e) {
            status_->setText(QStringLiteral("The shipped predictor did not load: %1").arg(QString::fromUtf8(e.what())));
        }
    }
    QString data = QSettings().value(kDatasetKey).toString();
    if ((data.isEmpty() || !QFileInfo::exists(data)) && predictor_) data = resolveOrigin(predictor_->card().data_origin);
    if (QFileInfo::exists(data)) dataPath_->setText(data);
    showCard();
}

PredictorPanel::~PredictorPanel()
{
    cancel_ = true;
    watcher_.waitForFinished();
}

QString PredictorPanel::datasetPath() const { return dataPath_->text(); }

void PredictorPanel::setDatasetPath(const QString& path)
{
    dataPath_->setText(path);
    QSettings().setValue(kDatasetKey, path);
}

PredictorRecipe PredictorPanel::recipe() const
{
    PredictorRecipe r = PredictorRecipe::named(recipeBox_->currentData().toString().toStdString());
    const PredictorRecipe base = r;
    r.epochs = epochs_->value();
    r.learning_rate = lr_->value();
    r.schedule = schedule_->currentText().toStdString();
    r.batch_size = batch_->value();
    r.seed = static_cast<std::uint64_t>(seed_->value());
    r.validation_fraction = validation_->value();
    r.ensemble = ensemble_->value();
    r.threads = threads_->value();
    if (r.epochs != base.epochs || r.learning_rate != base.learning_rate || r.schedule != base.schedule ||
        r.batch_size != base.batch_size || r.ensemble != base.ensemble)
        r.name += "+custom";
    return r;
}

void PredictorPanel::setRecipe(const PredictorRecipe& r)
{
    std::string base = r.name.substr(0, r.name.find('+'));
    int i = recipeBox_->findData(QString::fromStdString(base));
    if (i >= 0) recipeBox_->setCurrentIndex(i);
    epochs_->setValue(r.epochs);
    lr_->setValue(r.learning_rate);
    schedule_->setCurrentText(QString::fromStdString(r.schedule));
    batch_->setValue(r.batch_size);
    seed_->setValue(static_cast<int>(r.seed));
    validation_->setValue(r.validation_fraction);
    ensemble_->setValue(r.ensemble);
    threads_->setValue(r.threads);
}

bool PredictorPanel::busy() const { return watcher_.isRunning(); }

void PredictorPanel::cancel() { cancel_ = true; }

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

void PredictorPanel::startTraining() { runJob(Job::Train); }
void PredictorPanel::startEvaluation() { runJob(Job::Evaluate); }

void PredictorPanel::startCheck(int subnets, int images)
{
    if (busy()) return;
    if (!predictor_) {
        lastError_ = QStringLiteral("No predictor to check: train or load one.");
        status_->setText(lastError_);
        Q_EMIT jobFinished(false);
        return;
    }
    lastError_.clear();
    auto job = std::make_shared<JobResult>();
    job->kind = Job::Check;
    job->space = state_->space();
    job->predictor = predictor_;
    job->checkSubnets = subnets;
    job->checkImages = images;
    cancel_ = false;
    job_ = job;
    setBusy(true, QStringLiteral("Measuring %1 fresh subnets…").arg(subnets));
    watcher_.setFuture(QtConcurrent::run([this, job] {
        auto post = [this](std::function<void()> f) { QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection); };
        try {
            EvaluationRequest rq = shippedSupernetRequest();
            rq.images = static_cast<std::size_t>(job->checkImages);
            SupernetAccuracyOracle measurer(rq);
            JobControl control;
            control.cancel = &cancel_;
            control.progress = [this, post](std::size_t done, std::size_t total, const std::string& stage) {
                const QString text = QString::fromStdString(stage);
                post([this, done, total, text] {
                    progress_->setValue(total ? static_cast<int>(1000 * done / total) : 0);
                    status_->setText(text);
                });
            };
            measurer.setJobControl(control);
            ArchSampler sampler(job->space);
            PyRandom rng(kCheckSeed);
            std::vector<SubnetConfig> configs;
            for (int i = 0; i < job->checkSubnets; ++i) configs.push_back(sampler.random(rng));
            job->check = checkPredictor(configs, job->space, *job->predictor, measurer);
            const PredictorCheck& check = job->check;
            job->predicted = check.predicted;
            job->measured = check.measured;
            job->checkNote = formatFixed(check.mae_after_offset, 3) + " after the mean offset of " +
                             (check.mean_offset >= 0 ? "+" : "") + formatFixed(check.mean_offset, 2) + " points; " +
                             (rq.images ? groupThousands(static_cast<std::int64_t>(rq.images)) : std::string("all")) + " images of " +
                             rq.data + " per subnet" +
                             (check.transferred ? "; configs transferred to " + rq.space.name +
                                                      " (another task than the predictor's: compare rankings only)"
                                                : std::string());
        } catch (const CancelledError&) {
            job->cancelled = true;
        } catch (const std::exception& e) {
            job->error = e.what();
        }
    }));
}

void PredictorPanel::runJob(Job kind)
{
    if (busy()) return;
    lastError_.clear();
    const bool train = kind == Job::Train;
    auto job = std::make_shared<JobResult>();
    job->kind = kind;
    job->train = train;
    job->dataPath = dataPath_->text().trimmed();
    job->space = state_->space();
    try {
        job->recipe = recipe();
        job->recipe.validate();
    } catch (const std::exception& e) {
        lastError_ = QString::fromUtf8(e.what());
        showErrorLater(this, QStringLiteral("Training recipe"), lastError_);
        Q_EMIT jobFinished(false);
        return;
    }
    if (job->dataPath.isEmpty()) {
        lastError_ = QStringLiteral("Choose an accuracy dataset folder first.");
        status_->setText(lastError_);
        Q_EMIT jobFinished(false);
        return;
    }
    if (!train && !predictor_) {
        lastError_ = QStringLiteral("No predictor to evaluate: train or load one.");
        status_->setText(lastError_);
        Q_EMIT jobFinished(false);
        return;
    }
    if (dataset_ && datasetLoadedFrom_ == job->dataPath) job->dataset = dataset_;
    if (!train) job->predictor = predictor_;
    if (train) {
        loss_->clear();
        loss_->setXSpan(job->recipe.epochs * job->recipe.ensemble);
    }
    cancel_ = false;
    job_ = job;
    setBusy(true, train ? QStringLiteral("Training…") : QStringLiteral("Evaluating…"));
    watcher_.setFuture(QtConcurrent::run([this, job] {
        auto post = [this](std::function<void()> f) { QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection); };
        try {
            if (!job->dataset) {
                post([this] { status_->setText(QStringLiteral("Reading the dataset…")); });
                job->dataset = std::make_shared<AccuracyDataset>(AccuracyDataset::load(job->dataPath.toStdString(), job->space));
            }
            const AccuracyDataset& data = *job->dataset;
            const QString info = QStringLiteral("%1 pairs from %2 file(s), mean top-1 %3 %")
                                     .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(data.size()))))
                                     .arg(data.files().size())
                                     .arg(data.meanLabel() * 100, 0, 'f', 2);
            post([this, info] { dataInfo_->setText(info); });
            if (job->train) {
                post([this] { status_->setText(QStringLiteral("Training…")); });
                auto p = std::make_shared<AccuracyPredictor>(job->space);
                TrainingCallbacks cb;
                cb.cancel = &cancel_;
                cb.onEpoch = [this, post](const EpochRecord& e, int member) { post([this, e, member] { onEpoch(e, member); }); };
                cb.onProgress = [this, post](double f) { post([this, f] { progress_->setValue(static_cast<int>(f * 1000)); }); };
                p->train(data, job->recipe, cb);
                job->predictor = p;
            }
            const DatasetSplit split = job->predictor->splitOf(data);
            std::vector<SubnetConfig> configs;
            for (std::size_t i : split.validation) {
                configs.push_back(data.samples()[i].config);
                job->measured.push_back(data.samples()[i].top1);
            }
            job->predicted = job->predictor->predictUncached(configs);
        } catch (const CancelledError&) {
            job->cancelled = true;
        } catch (const std::exception& e) {
            job->error = e.what();
        }
    }));
}

void PredictorPanel::onEpoch(const EpochRecord& e, int member)
{
    const double x = member * epochs_->value() + e.epoch;
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

void PredictorPanel::finishJob()
{
    std::shared_ptr<JobResult> job = std::move(job_);
    setBusy(false, QString());
    if (!job) return;
    if (job->dataset) {
        dataset_ = job->dataset;
        datasetLoadedFrom_ = job->dataPath;
    }
    if (job->cancelled) {
        status_->setText(job->kind == Job::Check ? QStringLiteral("Check cancelled.") : QStringLiteral("Cancelled; the predictor is unchanged."));
        progress_->setValue(0);
        Q_EMIT jobFinished(false);
        return;
    }
    if (!job->error.empty()) {
        lastError_ = QString::fromStdString(job->error);
        status_->setText(lastError_);
        showErrorLater(this, job->train ? QStringLiteral("Training") : job->kind == Job::Check ? QStringLiteral("Check") : QStringLiteral("Evaluation"),
                       lastError_);
        Q_EMIT jobFinished(false);
        return;
    }
    progress_->setValue(1000);
    if (job->train) {
        predictor_ = job->predictor;
        QSettings().setValue(kDatasetKey, job->dataPath);
        status_->setText(QStringLiteral("Trained in %1 s. Save it to keep it; the Search panel uses it now.")
                             .arg(predictor_->card().training_seconds, 0, 'f', 1));
        showCard();
        Q_EMIT predictorChanged();
    } else if (job->kind == Job::Check) {
        lastCheck_ = job->check;
        metrics_->setToolTip(QString::fromStdString(job->check.measured_by));
        status_->setText(QStringLiteral("Checked on %1 fresh subnets (seed %2).").arg(job->measured.size()).arg(kCheckSeed));
        showScatter(job->predicted, job->measured, QString::fromStdString(job->checkNote));
        Q_EMIT jobFinished(true);
        return;
    } else {
        status_->setText(QStringLiteral("Evaluated on %1 held-out pairs.").arg(job->measured.size()));
    }
    showScatter(job->predicted, job->measured);
    Q_EMIT jobFinished(true);
}

void PredictorPanel::showCard()
{
    if (!predictor_) {
        card_->setText(QStringLiteral("<i>none: train one or load a .bin / .json</i>"));
        return;
    }
    const PredictorCard& c = predictor_->card();
    QString unseen;
    if (!c.unseen_features.empty()) {
        ArchEncoder enc(predictor_->space());
        QStringList names;
        for (int f : c.unseen_features) names << QString::fromStdString(featureName(enc, f));
        unseen = QStringLiteral("<br><b>never in its data:</b> %1 (predictions there are extrapolations)").arg(names.join(QStringLiteral(", ")));
    }
    card_->setText(QStringLiteral("<b>%1</b><br>space %2 · %3-dim encoding · base accuracy %4 %<br>"
                                  "recipe %5: %6 epochs, lr %7 %8, batch %9%10<br>"
                                  "data: %11 pairs (%12 train / %13 held out)<br>"
                                  "held-out MAE %14 · RMSE %15 points · τ %16%17")
                       .arg(predictor_->path().empty() ? QStringLiteral("trained in this session (not saved)")
                                                         : QString::fromStdString(predictor_->path()).toHtmlEscaped())
                       .arg(QString::fromStdString(c.space_name))
                       .arg(c.encoder_dims)
                       .arg(c.base_accuracy * 100, 0, 'f', 3)
                       .arg(QString::fromStdString(c.recipe.name))
                       .arg(c.recipe.epochs)
                       .arg(c.recipe.learning_rate)
                       .arg(QString::fromStdString(c.recipe.schedule))
                       .arg(c.recipe.batch_size)
                       .arg(c.recipe.ensemble > 1 ? QStringLiteral(", ensemble of %1").arg(c.recipe.ensemble) : QString())
                       .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(c.data_pairs))))
                       .arg(c.train_pairs)
                       .arg(c.validation_pairs)
                       .arg(c.validation.mae, 0, 'f', 4)
                       .arg(c.validation.rmse, 0, 'f', 4)
                       .arg(c.validation.kendall_tau, 0, 'f', 4)
                       .arg(unseen));
    // The card keeps the per-epoch record of the run that made it.
    loss_->clear();
    loss_->setXSpan(static_cast<double>(c.history.size()));
    for (const EpochRecord& e : c.history) {
        loss_->append(0, e.epoch, e.train_loss);
        loss_->append(1, e.epoch, e.validation.mae);
    }
}

void PredictorPanel::showScatter(const std::vector<double>& predicted, const std::vector<double>& measured, const QString& freshNote)
{
    const bool fresh = !freshNote.isEmpty();
    QChart* c = styledChart(fresh ? QStringLiteral("Predicted vs measured top-1 of fresh subnets on the supernet")
                                  : QStringLiteral("Predicted vs measured top-1 on the held-out split"));
    auto* pts = new QScatterSeries;
    pts->setName(fresh ? QStringLiteral("fresh subnets (measured on test images)") : QStringLiteral("held-out subnets"));
    pts->setMarkerSize(fresh ? 9 : 4);
    pts->setBorderColor(Qt::transparent);
    QColor ptColour = paletteColor("chart.series");
    ptColour.setAlpha(110);
    pts->setColor(ptColour);
    double lo = 1e9, hi = -1e9;
    QList<QPointF> points;
    points.reserve(static_cast<qsizetype>(predicted.size()));
    for (std::size_t i = 0; i < predicted.size(); ++i) {
        points.append(QPointF(measured[i], predicted[i]));
        lo = std::min({lo, measured[i], predicted[i]});
        hi = std::max({hi, measured[i], predicted[i]});
    }
    pts->append(points);
    scatterPoints_ = static_cast<int>(points.size());
    auto* diag = new QLineSeries;
    diag->setName(QStringLiteral("y = x"));
    QPen pen(paletteColor("highlight"));
    pen.setWidth(2);
    pen.setStyle(Qt::DashLine);
    diag->setPen(pen);
    if (lo > hi) lo = 80, hi = 95;
    diag->append(lo, lo);
    diag->append(hi, hi);
    c->addSeries(pts);
    c->addSeries(diag);
    auto* x = new QValueAxis;
    x->setTitleText(QStringLiteral("measured top-1 (%)"));
    auto* y = new QValueAxis;
    y->setTitleText(QStringLiteral("predicted top-1 (%)"));
    for (QValueAxis* a : {x, y}) {
        a->setRange(lo - 0.2, hi + 0.2);
        a->setLabelFormat(QStringLiteral("%.1f"));
    }
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(pts), static_cast<QAbstractSeries*>(diag)}) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
    replaceChart(scatterView_, c);
    if (predicted.empty()) {
        metrics_->clear();
        return;
    }
    const PredictionMetrics m = measurePredictions(predicted, measured);
    metrics_->setText(QStringLiteral("<b>MAE</b> %1 · <b>RMSE</b> %2 accuracy points · <b>Pearson</b> r %3 · "
                                     "<b>Kendall</b> τ %4 &nbsp;(%5 %6)")
                          .arg(m.mae, 0, 'f', 4)
                          .arg(m.rmse, 0, 'f', 4)
                          .arg(m.pearson, 0, 'f', 4)
                          .arg(m.kendall_tau, 0, 'f', 4)
                          .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(m.count))))
                          .arg(fresh ? QStringLiteral("fresh subnets") : QStringLiteral("held-out pairs")) +
                      (fresh ? QStringLiteral("<br>MAE %1").arg(freshNote.toHtmlEscaped()) : QString()));
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
    showScatter({}, {});
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
int PredictorPanel::scatterPoints() const { return scatterPoints_; }
QString PredictorPanel::metricsText() const { return metrics_->text(); }

}  // namespace tinyscope::ui
