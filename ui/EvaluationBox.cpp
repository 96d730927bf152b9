#include "EvaluationBox.h"

#include "Palette.h"
#include "AppState.h"
#include "DeployDialog.h"
#include "EvaluationOptions.h"
#include "JobRunner.h"
#include "PerClassChart.h"

#include "data/ImageDataset.h"
#include "io/DataPaths.h"
#include "nn/accuracy/EvaluationJob.h"
#include "workspace/Workspace.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {
// The result line: top-1, images, data, speed; the space and resolution; how BN was treated; which
// engine, data type and instruction set measured it (figures of other ISAs are not comparable).
QString evaluationHtml(const EvalResult& r, const EvaluationRequest& rq)
{
    QString text = QStringLiteral("<b>top-1 %1 %</b> on %2 images of %3 (%4 img/s)")
                       .arg(r.top1, 0, 'f', 2)
                       .arg(r.images)
                       .arg(QString::fromStdString(rq.data).toHtmlEscaped())
                       .arg(r.images_per_second, 0, 'f', 0);
    text += QStringLiteral("<br>%1 at %2 px").arg(QString::fromStdString(rq.space.name)).arg(rq.config.image_size);
    text += r.calibration_images ? QStringLiteral(", BN re-calibrated on %1 calibration images (%2)")
                                       .arg(r.calibration_images)
                                       .arg(QString::fromStdString(evalEngineTitle(r.calibration_engine)))
                                 : QStringLiteral(", BN statistics of the checkpoint");
    if (r.dtype == "int8")
        text += QStringLiteral("<br>measured by oneDNN int8 (%1): our PTQ on %2 calibration images, Int8Forward's exact arithmetic")
                    .arg(QString::fromStdString(r.isa).toHtmlEscaped())
                    .arg(rq.int8_calib_images);
    else
        text += QStringLiteral("<br>measured by %1 %2 (%3)")
                    .arg(QString::fromStdString(evalEngineTitle(r.engine)),
                         QString::fromStdString(r.dtype), QString::fromStdString(r.isa).toHtmlEscaped());
    if (!r.engine_note.empty()) text += QStringLiteral("<br>") + QString::fromStdString(r.engine_note).toHtmlEscaped();
    if (r.skipped) text += QStringLiteral("<br>%1 unreadable images skipped").arg(r.skipped);
    return text;
}

bool isFashionMnist(const QString& data) { return data.startsWith(QStringLiteral("fashion-mnist")); }
}  // namespace

EvaluationBox::EvaluationBox(AppState* state, QWidget* parent) : QGroupBox(QStringLiteral("Evaluate on a supernet"), parent), state_(state)
{
    auto* lay = new QVBoxLayout(this);
    options_ = new EvaluationOptions;
    lay->addWidget(options_);
    lay->addLayout(actionRows());
    progress_ = new QProgressBar;
    progress_->setRange(0, 100);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    lay->addWidget(progress_);
    note_ = new QLabel;
    note_->setWordWrap(true);
    note_->setStyleSheet(QStringLiteral("color: %1").arg(paletteName("text.note")));
    lay->addWidget(note_);
    switchWorkspace_ = new QPushButton(QStringLiteral("Switch to the Fashion-MNIST workspace"));
    switchWorkspace_->setToolTip(QStringLiteral("Its space, shipped supernet, predictor and Debian's Fashion-MNIST data: "
                                                "everything there can be measured"));
    lay->addWidget(switchWorkspace_);
    result_ = new QLabel(QStringLiteral("No evaluation yet."));
    result_->setWordWrap(true);
    result_->setTextFormat(Qt::RichText);
    lay->addWidget(result_);
    perClass_ = new PerClassChart(this);
    classes_ = new QListWidget;
    classes_->setMaximumHeight(110);
    classes_->setToolTip(QStringLiteral("Drop an image on the panel to classify it"));
    classes_->addItem(QStringLiteral("Drop an image on the panel, or press Classify image…"));
    classes_->item(0)->setForeground(paletteColor("text.faint"));
    lay->addWidget(classes_);

    showWorkspace();
    connect(options_, &EvaluationOptions::supernetChosen, this, &EvaluationBox::useSupernet);
    connect(options_, &EvaluationOptions::dataChanged, this, &EvaluationBox::refreshNotes);
    connect(switchWorkspace_, &QPushButton::clicked, this, [this] {
        state_->setWorkspace(shippedWorkspace(shippedWorkspaceNames().front()));
    });
    connect(state_, &AppState::workspaceChanged, this, &EvaluationBox::showWorkspace);
    connect(state_, &AppState::subnetChanged, this, &EvaluationBox::refreshStale);
    connect(state_, &AppState::spaceChanged, this, &EvaluationBox::refreshStale);
    refreshNotes();
}

QLayout* EvaluationBox::actionRows()
{
    auto* rows = new QVBoxLayout;
    rows->setContentsMargins(0, 0, 0, 0);
    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(QStringLiteral("Evaluate"));
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setEnabled(false);
    auto* classifyB = new QPushButton(QStringLiteral("Classify image…"));
    auto* deployB = new QPushButton(QStringLiteral("Deploy…"));
    run_->setToolTip(QStringLiteral("Measure the subnet's top-1 on the supernet (off the GUI thread)"));
    cancel_->setToolTip(QStringLiteral("Stop the evaluation"));
    classifyB->setToolTip(QStringLiteral("Classify one image with the subnet (or drop an image on the panel)"));
    deployB->setToolTip(QStringLiteral("Write the selected subnet of this supernet as an int8 TFLite or float ONNX file, "
                                       "and compare its memory on three engines (docs/DEPLOY.md)"));
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    buttons->addWidget(classifyB);
    rows->addLayout(buttons);
    rows->addWidget(deployB);   // its own row: the three above already fill the side panel's width
    evalJobs_ = new JobRunner(this);
    classifyJobs_ = new JobRunner(this);
    connect(run_, &QPushButton::clicked, this, &EvaluationBox::evaluate);
    connect(deployB, &QPushButton::clicked, this, [this] { openDeployDialog(); });
    connect(evalJobs_, &JobRunner::progress, this, [this](qint64 done, qint64 total, const QString& stage) {
        if (evalJobs_->cancelRequested()) return;
        progress_->setValue(total ? static_cast<int>(100 * done / total) : 0);
        progress_->setFormat(stage + QStringLiteral(" %1/%2").arg(done).arg(total));
    });
    connect(cancel_, &QPushButton::clicked, this, [this] {
        evalJobs_->cancel();
        progress_->setFormat(QStringLiteral("cancelling…"));
    });
    connect(classifyB, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Image"), QString(),
                                                 QStringLiteral("Images (*.png *.jpg *.jpeg)"));
        if (!p.isEmpty()) classify(p);
    });
    return rows;
}

EvaluationBox::~EvaluationBox() = default;   // the runners cancel and wait

void EvaluationBox::showWorkspace()
{
    options_->showWorkspace(state_->workspace());
    refreshNotes();
    showKeptResult();
    refreshStale();
}

void EvaluationBox::showKeptResult()
{
    // Issue 47: a result belongs to the space it was measured in; another space shows its own last
    // result, or none, and the per-class chart goes with it. Another supernet of the same space
    // keeps the result, marked stale (refreshStale).
    const QString space = QString::fromStdString(state_->space().name);
    if (evaluatedSubnet_ && keptSpaceOf(evaluatedSpace_) == space) return;
    const auto k = kept_.find(space);
    if (k == kept_.end()) {
        evaluatedSubnet_.reset();
        evaluatedSpace_.clear();
        resultHtml_.clear();
        last_ = EvalResult();
        stale_ = false;
        result_->clear();
        Q_EMIT perClassAvailable(false);
        return;
    }
    evaluatedSpace_ = k->second.key;
    evaluatedSubnet_ = k->second.subnet;
    last_ = k->second.result;
    resultHtml_ = k->second.html;
    const bool chart = perClass_->showResult(last_, k->second.classNames);
    Q_EMIT perClassAvailable(chart);
    showStale(isStale());
}

void EvaluationBox::useSupernet(const QString& checkpoint)
{
    try {
        state_->useSupernet(checkpoint);
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Supernet"), QString::fromUtf8(e.what()));
        showWorkspace();
    }
}

bool EvaluationBox::ready() const
{
    const Workspace& w = state_->workspace();
    const QString data = options_->data();
    if (!w.hasSupernet() || !QFileInfo::exists(QString::fromStdString(w.supernet)) || data.isEmpty()) return false;
    return !isFashionMnist(data) || !fashionMnistDir().empty();
}

void EvaluationBox::refreshNotes()
{
    QStringList notes;
    const QString data = options_->data();
    if (isFashionMnist(data) && fashionMnistDir().empty())
        notes << QStringLiteral("Fashion-MNIST is missing: install the Debian package <b>dataset-fashion-mnist</b>.");
    const Workspace& w = state_->workspace();
    if (!w.hasSupernet())
        notes << QStringLiteral("Evaluation is off in workspace %1: %2. Choose a checkpoint trained in space %3, or switch "
                                "to the Fashion-MNIST workspace.")
                     .arg(QString::fromStdString(w.title).toHtmlEscaped(), QString::fromStdString(w.evaluationBlocker()).toHtmlEscaped(),
                          QString::fromStdString(w.space.name).toHtmlEscaped());
    else if (data.isEmpty())
        notes << QStringLiteral("Choose the data to evaluate on (a folder of class sub-folders, or IDX files).");
    note_->setText(notes.join(QStringLiteral("<br>")));
    note_->setVisible(!notes.isEmpty());
    switchWorkspace_->setVisible(!w.hasSupernet() && w.name != shippedWorkspaceNames().front());
    run_->setEnabled(!running_ && ready());
}

void EvaluationBox::setRunning(bool running)
{
    running_ = running;
    run_->setEnabled(!running && ready());
    cancel_->setEnabled(running);
    if (running) {
        progress_->setValue(0);
        progress_->setFormat(QStringLiteral("starting…"));
    }
}

bool EvaluationBox::prepareRequest(EvaluationRequest& rq, const QString& title)
{
    // The selected subnet on the workspace's supernet (of the same space: no transfer).
    const Workspace& w = state_->workspace();
    if (!w.hasSupernet()) {
        QMessageBox::warning(this, title, QStringLiteral("Workspace %1: %2.").arg(QString::fromStdString(w.title), QString::fromStdString(w.evaluationBlocker())));
        return false;
    }
    rq.space = w.space;
    rq.config = state_->subnet();
    rq.supernet = w.supernet;
    if (!w.calib_data.empty()) rq.calib_data = w.calib_data;
    return true;
}

DeployDialog* EvaluationBox::openDeployDialog()
{
    EvaluationRequest rq;
    if (!prepareRequest(rq, QStringLiteral("Deploy"))) return nullptr;
    ModelSource subnet;
    try {
        subnet = ModelSource::subnet(rq.space, rq.config, rq.supernet);
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Deploy"), QString::fromUtf8(e.what()));
        return nullptr;
    }
    auto* d = new DeployDialog(subnet, QString(), this);
    d->setBoard(state_->boardName());   // the workspace's board
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

void EvaluationBox::evaluate()
{
    if (running_) return;
    EvaluationRequest rq;
    if (!prepareRequest(rq, QStringLiteral("Evaluate"))) return;
    rq.data = options_->data().toStdString();
    rq.images = static_cast<std::size_t>(options_->images());
    rq.calibrate = options_->calibrationImages() > 0;
    rq.calibration.images = static_cast<std::size_t>(options_->calibrationImages());
    rq.engine = options_->engine();
    rq.dtype = options_->dtype();
    rq.int8 = options_->int8();
    setRunning(true);
    // The selection the result is for: the one at the start (the user may move on while it runs).
    auto asked = std::make_shared<const SubnetConfig>(state_->subnet());
    const QString askedSpace = evaluationKey();
    evalJobs_->run([rq](const JobControl& job) { return runEvaluation(rq, job); },
                   [this, rq, asked, askedSpace](EvalResult r) {
                       kept_[keptSpaceOf(askedSpace)] = Kept{r, evaluationHtml(r, rq), asked, rq.space.class_names, askedSpace};
                       if (keptSpaceOf(askedSpace) != QString::fromStdString(state_->space().name)) {   // the space changed meanwhile: kept for it
                           setRunning(false);
                           progress_->setFormat(QStringLiteral("done (kept with its workspace)"));
                           Q_EMIT evaluated(true);
                           return;
                       }
                       evaluatedSpace_ = askedSpace;
                       evaluatedSubnet_ = asked;
                       showResult(std::move(r), rq);
                   },
                   [this](const JobFailure& f) {
                       setRunning(false);
                       progress_->setFormat(f.cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed"));
                       if (!f.cancelled) QMessageBox::warning(this, QStringLiteral("Evaluate"), f.message);
                       Q_EMIT evaluated(false);
                   });
}

void EvaluationBox::showResult(EvalResult r, const EvaluationRequest& rq)
{
    setRunning(false);
    last_ = std::move(r);
    progress_->setValue(100);
    progress_->setFormat(QStringLiteral("done in %1 s").arg(last_.seconds, 0, 'f', 1));
    resultHtml_ = evaluationHtml(last_, rq);
    if (perClass_->showResult(last_, rq.space.class_names)) {
        Q_EMIT perClassAvailable(true);
        Q_EMIT perClassShown();
    }
    showStale(isStale());
    Q_EMIT state_->message(QStringLiteral("Evaluated: top-1 %1 %").arg(last_.top1, 0, 'f', 2));
    Q_EMIT evaluated(true);
}

void EvaluationBox::setImageCounts(int images, int calibrationImages) { options_->setImageCounts(images, calibrationImages); }

bool EvaluationBox::waitForIdle(int timeoutMs) { return evalJobs_->waitForIdle(timeoutMs); }

QString EvaluationBox::resultText() const { return result_->text(); }

int EvaluationBox::perClassBars() const { return perClass_->bars(); }

QChartView* EvaluationBox::perClassView() const { return perClass_; }

QString EvaluationBox::keptSpaceOf(const QString& key) { return key.section(QLatin1Char('|'), 0, 0); }

QString EvaluationBox::evaluationKey() const
{
    return QString::fromStdString(state_->space().name + "|" + state_->workspace().supernet);
}

bool EvaluationBox::isStale() const
{
    return evaluatedSpace_ != evaluationKey() ||
           !(*evaluatedSubnet_ == state_->subnet());
}

void EvaluationBox::refreshStale()
{
    if (evaluatedSubnet_ && isStale() != stale_) showStale(!stale_);
}

void EvaluationBox::showStale(bool stale)
{
    stale_ = stale;
    result_->setText(stale ? QStringLiteral("<span style='color:%1'><b>Stale:</b> this result is for an earlier subnet or supernet; "
                                            "press Evaluate for the selected one.</span><br><span style='color:%2'>%3</span>")
                                 .arg(paletteName("status.warn"), paletteName("text.dim"), resultHtml_)
                           : resultHtml_);
    perClass_->setStale(stale);
}

void EvaluationBox::classify(const QString& imagePath)
{
    if (classifyJobs_->busy()) return;
    EvaluationRequest rq;
    if (!prepareRequest(rq, QStringLiteral("Classify image"))) return;
    // Without the space's calibration data here, the core classifies on the checkpoint's BatchNorm
    // statistics and says so (the note goes to the status bar), as `tinyscope classify` does.
    rq.calibrate = options_->calibrationImages() > 0;
    if (rq.calib_data == ownCalibrationData(rq.space)) rq.calib_data.clear();   // the default: may fall back
    rq.calibration.images = std::min<std::size_t>(500, static_cast<std::size_t>(options_->calibrationImages()));
    // Extraction and BN re-calibration take about a second: off the GUI thread.
    classes_->clear();
    classes_->addItem(QStringLiteral("classifying %1…").arg(QFileInfo(imagePath).fileName()));
    classifyJobs_->run([rq, path = imagePath.toStdString()](const JobControl&) { return runClassification(rq, path); },
                       [this, imagePath](const Classification& c) {
                           const std::vector<ClassScore>& scores = c.scores;
                           classes_->clear();
                           for (std::size_t i = 0; i < scores.size() && i < 5; ++i)
                               classes_->addItem(QStringLiteral("%1 %  %2")
                                                     .arg(100.0 * scores[i].probability, 6, 'f', 2)
                                                     .arg(QString::fromStdString(scores[i].name)));
                           if (!scores.empty())
                               Q_EMIT state_->message(QStringLiteral("%1: %2%3").arg(QFileInfo(imagePath).fileName(),
                                                                                    QString::fromStdString(scores.front().name),
                                                                                    c.calibration_note.empty()
                                                                                        ? QString()
                                                                                        : QStringLiteral(" — ") + QString::fromStdString(c.calibration_note)));
                           Q_EMIT classified(!scores.empty());
                       },
                       [this](const JobFailure& f) {
                           classes_->clear();
                           QMessageBox::warning(this, QStringLiteral("Classify image"), f.message);
                           Q_EMIT classified(false);
                       });
}

}  // namespace tinyscope::ui
