#include "EvaluationBox.h"

#include "Palette.h"
#include "AppState.h"
#include "ChartStyle.h"
#include "DeployDialog.h"
#include "JobRunner.h"

#include "data/ImageDataset.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/measure/EvaluationJob.h"
#include "workspace/Workspace.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QValueAxis>

namespace tinyscope::ui {

namespace {
QString perClassTitle(double top1) { return QStringLiteral("Top-1 per class (all: %1 %)").arg(top1, 0, 'f', 1); }
}  // namespace

EvaluationBox::EvaluationBox(AppState* state, QWidget* parent) : QGroupBox(QStringLiteral("Evaluate on a supernet"), parent), state_(state)
{
    auto* lay = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    supernet_ = new QLineEdit;
    supernet_->setPlaceholderText(QStringLiteral("supernet checkpoint (.pth)"));
    auto* browse = new QPushButton(QStringLiteral("…"));
    browse->setMaximumWidth(30);
    auto* row = new QHBoxLayout;
    row->addWidget(supernet_);
    row->addWidget(browse);
    form->addRow(QStringLiteral("Supernet"), row);
    data_ = new QComboBox;
    data_->setEditable(true);
    data_->addItems({QStringLiteral("fashion-mnist:test"), QStringLiteral("fashion-mnist:holdout")});
    auto* browseData = new QPushButton(QStringLiteral("…"));
    browseData->setMaximumWidth(30);
    auto* drow = new QHBoxLayout;
    drow->addWidget(data_, 1);
    drow->addWidget(browseData);
    form->addRow(QStringLiteral("Data"), drow);
    images_ = new QSpinBox;
    images_->setRange(0, 1000000);
    images_->setSpecialValueText(QStringLiteral("all"));
    images_->setValue(2000);
    calibImages_ = new QSpinBox;
    calibImages_->setRange(0, 100000);
    calibImages_->setSpecialValueText(QStringLiteral("off"));
    calibImages_->setValue(1000);
    calibImages_->setToolTip(QStringLiteral("BN re-calibration on Fashion-MNIST holdout images (0: keep the checkpoint's statistics)"));
    auto* nrow = new QHBoxLayout;
    nrow->addWidget(new QLabel(QStringLiteral("images")));
    nrow->addWidget(images_);
    nrow->addWidget(new QLabel(QStringLiteral("BN calib.")));
    nrow->addWidget(calibImages_);
    form->addRow(nrow);
    lay->addLayout(form);
    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(QStringLiteral("Evaluate"));
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setEnabled(false);
    auto* classifyB = new QPushButton(QStringLiteral("Classify image…"));
    auto* deployB = new QPushButton(QStringLiteral("Deploy…"));
    deployB->setToolTip(QStringLiteral("Write the selected subnet of this supernet as an int8 TFLite or float ONNX file, "
                                       "and compare its memory on three engines (docs/DEPLOY.md)"));
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    buttons->addWidget(classifyB);
    lay->addLayout(buttons);
    lay->addWidget(deployB);   // its own row: the three above already fill the side panel's width
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
    perClass_ = new QChartView(this);
    perClass_->setRenderHint(QPainter::Antialiasing);
    perClass_->setMinimumHeight(230);
    classes_ = new QListWidget;
    classes_->setMaximumHeight(110);
    classes_->setToolTip(QStringLiteral("Drop an image on the panel to classify it"));
    classes_->addItem(QStringLiteral("Drop an image on the panel, or press Classify image…"));
    classes_->item(0)->setForeground(paletteColor("text.faint"));
    lay->addWidget(classes_);

    showWorkspace();
    connect(browse, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Supernet checkpoint"), supernet_->text(),
                                                 QStringLiteral("PyTorch checkpoint (*.pth *.pt *.tar);;All files (*)"));
        if (!p.isEmpty()) useSupernet(p);
    });
    connect(supernet_, &QLineEdit::editingFinished, this, [this] {
        if (supernet_->text() != QString::fromStdString(state_->workspace().supernet)) useSupernet(supernet_->text());
    });
    connect(switchWorkspace_, &QPushButton::clicked, this, [this] {
        state_->setWorkspace(shippedWorkspace(shippedWorkspaceNames().front()));
    });
    connect(browseData, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getExistingDirectory(this, QStringLiteral("Dataset folder (class sub-folders or IDX files)"));
        if (!p.isEmpty()) data_->setCurrentText(p);
        refreshNotes();
    });
    connect(run_, &QPushButton::clicked, this, &EvaluationBox::evaluate);
    connect(deployB, &QPushButton::clicked, this, [this] { openDeployDialog(); });
    evalJobs_ = new JobRunner(this);
    classifyJobs_ = new JobRunner(this);
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
    connect(data_, &QComboBox::currentTextChanged, this, &EvaluationBox::refreshNotes);
    connect(state_, &AppState::workspaceChanged, this, &EvaluationBox::showWorkspace);
    connect(state_, &AppState::subnetChanged, this, &EvaluationBox::refreshStale);
    connect(state_, &AppState::spaceChanged, this, &EvaluationBox::refreshStale);
    refreshNotes();
}

EvaluationBox::~EvaluationBox() = default;   // the runners cancel and wait

void EvaluationBox::showWorkspace()
{
    const Workspace& w = state_->workspace();
    supernet_->setText(QString::fromStdString(w.supernet));
    supernet_->setPlaceholderText(w.hasSupernet() ? QString()
                                                  : QStringLiteral("none for space %1: choose a checkpoint of it").arg(QString::fromStdString(w.space.name)));
    data_->setCurrentText(QString::fromStdString(w.data));
    refreshNotes();
    refreshStale();
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
    if (!w.hasSupernet() || !QFileInfo::exists(QString::fromStdString(w.supernet)) || data_->currentText().isEmpty()) return false;
    return !data_->currentText().startsWith(QStringLiteral("fashion-mnist")) || !fashionMnistDir().empty();
}

void EvaluationBox::refreshNotes()
{
    QStringList notes;
    if (data_->currentText().startsWith(QStringLiteral("fashion-mnist")) && fashionMnistDir().empty())
        notes << QStringLiteral("Fashion-MNIST is missing: install the Debian package <b>dataset-fashion-mnist</b>.");
    const Workspace& w = state_->workspace();
    if (!w.hasSupernet())
        notes << QStringLiteral("Evaluation is off in workspace %1: %2. Choose a checkpoint trained in space %3, or switch "
                                "to the Fashion-MNIST workspace.")
                     .arg(QString::fromStdString(w.title).toHtmlEscaped(), QString::fromStdString(w.evaluationBlocker()).toHtmlEscaped(),
                          QString::fromStdString(w.space.name).toHtmlEscaped());
    else if (data_->currentText().isEmpty())
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
    ModelSpec spec;
    spec.supernet = rq.supernet;
    spec.space = rq.space.name;
    spec.subnet = rq.config;
    auto* d = new DeployDialog(spec, QString(), this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

void EvaluationBox::evaluate()
{
    if (running_) return;
    EvaluationRequest rq;
    if (!prepareRequest(rq, QStringLiteral("Evaluate"))) return;
    rq.data = data_->currentText().toStdString();
    rq.images = static_cast<std::size_t>(images_->value());
    rq.calibrate = calibImages_->value() > 0;
    rq.calibration.images = static_cast<std::size_t>(calibImages_->value());
    setRunning(true);
    // The selection the result is for: the one at the start (the user may move on while it runs).
    auto asked = std::make_shared<const SubnetConfig>(state_->subnet());
    const QString askedSpace = evaluationKey();
    evalJobs_->run([rq](const JobControl& job) { return runEvaluation(rq, job); },
                   [this, rq, asked, askedSpace](EvalResult r) {
                       setRunning(false);
                       last_ = std::move(r);
                       progress_->setValue(100);
                       progress_->setFormat(QStringLiteral("done in %1 s").arg(last_.seconds, 0, 'f', 1));
                       QString text = QStringLiteral("<b>top-1 %1 %</b> on %2 images of %3 (%4 img/s)")
                                          .arg(last_.top1, 0, 'f', 2)
                                          .arg(last_.images)
                                          .arg(QString::fromStdString(rq.data).toHtmlEscaped())
                                          .arg(last_.images_per_second, 0, 'f', 0);
                       text += QStringLiteral("<br>%1 at %2 px").arg(QString::fromStdString(rq.space.name)).arg(rq.config.image_size);
                       text += last_.calibration_images
                                   ? QStringLiteral(", BN re-calibrated on %1 holdout images").arg(last_.calibration_images)
                                   : QStringLiteral(", BN statistics of the checkpoint");
                       if (last_.skipped) text += QStringLiteral("<br>%1 unreadable images skipped").arg(last_.skipped);
                       resultHtml_ = text;
                       evaluatedSpace_ = askedSpace;
                       evaluatedSubnet_ = asked;
                       showPerClass(last_, rq.space.class_names);
                       showStale(isStale());
                       Q_EMIT state_->message(QStringLiteral("Evaluated: top-1 %1 %").arg(last_.top1, 0, 'f', 2));
                       Q_EMIT evaluated(true);
                   },
                   [this](const JobFailure& f) {
                       setRunning(false);
                       progress_->setFormat(f.cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed"));
                       if (!f.cancelled) QMessageBox::warning(this, QStringLiteral("Evaluate"), f.message);
                       Q_EMIT evaluated(false);
                   });
}

void EvaluationBox::setImageCounts(int images, int calibrationImages)
{
    images_->setValue(images);
    calibImages_->setValue(calibrationImages);
}

bool EvaluationBox::waitForIdle(int timeoutMs) { return evalJobs_->waitForIdle(timeoutMs); }

QString EvaluationBox::resultText() const { return result_->text(); }

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
    if (QChart* chart = perClass_->chart()) {
        const QString title = perClassTitle(last_.top1);
        chart->setTitle(stale ? title + QStringLiteral(" — stale: an earlier subnet") : title);
        chart->setOpacity(stale ? 0.45 : 1.0);
    }
}

void EvaluationBox::showPerClass(const EvalResult& r, const std::vector<std::string>& classNames)
{
    perClassBars_ = r.classes;
    if (r.classes == 0) return;
    // Horizontal bars, first class on top; the overall top-1 as the title.
    auto* set = new QBarSet(QStringLiteral("top-1 %"));
    set->setColor(paletteColor("chart.series"));
    QStringList names;
    for (int c = r.classes - 1; c >= 0; --c) {
        *set << r.classTop1(c);
        names << QString::fromStdString(className(classNames, c));
    }
    auto* series = new QHorizontalBarSeries;
    series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    QChart* chart = styledChart(perClassTitle(r.top1));
    chart->addSeries(series);
    chart->legend()->hide();
    auto* y = new QBarCategoryAxis;
    y->append(names);
    auto* x = new QValueAxis;
    x->setRange(0, 100);
    x->setTickCount(6);
    x->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    replaceChart(perClass_, chart);
    Q_EMIT perClassShown();
}

void EvaluationBox::classify(const QString& imagePath)
{
    if (classifyJobs_->busy()) return;
    EvaluationRequest rq;
    if (!prepareRequest(rq, QStringLiteral("Classify image"))) return;
    rq.calibrate = calibImages_->value() > 0 && !fashionMnistDir().empty();
    rq.calibration.images = std::min<std::size_t>(500, static_cast<std::size_t>(calibImages_->value()));
    // Extraction and BN re-calibration take about a second: off the GUI thread.
    classes_->clear();
    classes_->addItem(QStringLiteral("classifying %1…").arg(QFileInfo(imagePath).fileName()));
    classifyJobs_->run([rq, path = imagePath.toStdString()](const JobControl&) { return runClassification(rq, path); },
                       [this, imagePath](const std::vector<ClassScore>& scores) {
                           classes_->clear();
                           for (std::size_t i = 0; i < scores.size() && i < 5; ++i)
                               classes_->addItem(QStringLiteral("%1 %  %2")
                                                     .arg(100.0 * scores[i].probability, 6, 'f', 2)
                                                     .arg(QString::fromStdString(scores[i].name)));
                           if (!scores.empty())
                               Q_EMIT state_->message(QStringLiteral("%1: %2").arg(QFileInfo(imagePath).fileName(),
                                                                                  QString::fromStdString(scores.front().name)));
                           Q_EMIT classified(!scores.empty());
                       },
                       [this](const JobFailure& f) {
                           classes_->clear();
                           QMessageBox::warning(this, QStringLiteral("Classify image"), f.message);
                           Q_EMIT classified(false);
                       });
}

}  // namespace tinyscope::ui
