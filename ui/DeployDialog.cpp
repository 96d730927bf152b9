#include "DeployDialog.h"

#include "DeployForm.h"
#include "DeployMemoryView.h"
#include "JobProgressBar.h"
#include "JobRunner.h"
#include "Palette.h"
#include "ScreenFit.h"
#include "TfliteDeviceView.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "data/ImageDataset.h"
#include "deploy/TfliteRead.h"
#include "device/TfliteDeviceRun.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "UiText.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTemporaryFile>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {

// One line for people: which subnet of which checkpoint, and its figures from the cost model.
QString describeModel(const ModelSource& m)
{
    const SubnetSource* s = m.asSubnet();
    if (!s) return QString::fromStdString(m.describe()).toHtmlEscaped();
    const DesignSpace& space = s->space;
    const SubnetConfig& c = s->config;
    int blocks = 0;
    for (int st = 0; st < space.numStages(); ++st) blocks += c.activeDepth(space, st);
    const CostSummary cost = CostModel::summary(s->layout());   // narrowed when channels were pruned
    QString text = s->own_weights ? QStringLiteral("Subnet saved in <b>%1</b>%3 (space %2)")
                                        .arg(QString::fromStdString(s->config_name).toHtmlEscaped(), QString::fromStdString(space.name).toHtmlEscaped(),
                                             s->channels.empty() ? QString() : QStringLiteral(", channels pruned"))
                                  : QStringLiteral("Subnet of <b>%1</b> (space %2)")
                                        .arg(QFileInfo(QString::fromStdString(s->checkpoint)).fileName().toHtmlEscaped(),
                                             QString::fromStdString(space.name).toHtmlEscaped());
    text += QStringLiteral(": %1 px").arg(c.image_size);
    if (c.wid >= 0 && static_cast<std::size_t>(c.wid) < space.width_mult_list.size())
        text += QStringLiteral(", width ×%1").arg(space.width_mult_list[static_cast<std::size_t>(c.wid)]);
    text += QStringLiteral(", %1 blocks — %2 M MACs, peak SRAM %3, flash %4 (cost model, int8)")
                .arg(blocks)
                .arg(cost.millionMacs(), 0, 'f', 2)
                .arg(kbText(cost.peak_activation_bytes), kbText(cost.flash_bytes));
    return text;
}

// The progress stages of deployModel and compareDeployMemory, said for people.
QString stageText(const std::string& stage)
{
    if (stage == "TensorFlow Lite Micro") return QStringLiteral("TFLM: the file in TensorFlow Lite Micro (tflm_run)");
    if (stage == "TinyEngine's TFLite code generator") return QStringLiteral("TinyEngine: its TFLite code generator on the file");
    if (stage == "done") return QStringLiteral("memory compared");
    return QString::fromStdString(stage);
}

// Where the file goes is checked before any work (a folder that does not exist yet below a
// writable one, as the default ~/tinyscope-deploy, is created). InputError says why not.
void checkOutputFile(const std::string& out)
{
    if (out.empty()) throw InputError("Output file: give a file name");
    const std::string folder = parentFolderOf(out);
    if (!QFileInfo::exists(QString::fromStdString(folder))) {
        requireWritableFolder(folder, "Output file's folder");
        QDir().mkpath(QString::fromStdString(folder));
    }
    requireWritableFile(out, "Output file");
    // The permission bits do not tell everything (root in /proc, a read-only mount): a real
    // file in the folder does; removed at once.
    QTemporaryFile probe(QString::fromStdString(folder) + QStringLiteral("/.tinyscope-deploy-XXXXXX"));
    if (!probe.open())
        throw InputError("Output file " + out + ": cannot create a file in " + folder + ": " + probe.errorString().toStdString());
}

// The written file for people: its size, format, ops, input and output tensors, cost-model figures.
QString summaryHtml(const DeployResult& r)
{
    auto tensor = [](const DeployTensor& t) {
        QStringList dims;
        for (const auto d : t.shape) dims << QString::number(d);
        QString s = QStringLiteral("<tt>%1</tt> [%2] %3").arg(QString::fromStdString(t.name).toHtmlEscaped(), dims.join(QLatin1Char(',')),
                                                               QString::fromStdString(t.type));
        if (t.scale && t.zero_point) s += QStringLiteral(", scale %1, zero point %2").arg(*t.scale, 0, 'g', 6).arg(*t.zero_point);
        else s += QStringLiteral(" (float: no scale, zero point)");
        return s;
    };
    QStringList ops;
    for (const auto& [op, n] : r.ops) ops << QStringLiteral("%1 %2").arg(QString::fromStdString(op)).arg(n);
    QString text = QStringLiteral("<b>%1</b> — %2 B, %3<br><b>Ops</b> %4<br><b>Input</b> %5<br><b>Output</b> %6<br>"
                                 "<b>Cost model</b> %7 MACs, peak SRAM %8 B, flash %9 B (int8)")
                       .arg(QString::fromStdString(r.out).toHtmlEscaped(), thousandsText(static_cast<std::int64_t>(r.bytes)),
                            (r.format == DeployFormat::TFLite ? QStringLiteral("TFLite, int8") : QStringLiteral("ONNX, float32")) +
                                (r.batchnorm.empty() ? QString() : QStringLiteral("; BatchNorm: ") + QString::fromStdString(r.batchnorm).toHtmlEscaped()),
                            ops.join(QStringLiteral(", ")), tensor(r.input), tensor(r.output), thousandsText(r.cost.macs),
                            thousandsText(r.cost.peak_sram_bytes), thousandsText(r.cost.flash_bytes));
    if (r.format != DeployFormat::TFLite)
        text += QStringLiteral("<br><i>The three-engine memory table is for the int8 TFLite file (the engines that run a "
                               "microcontroller model): choose TFLite and deploy again to see it.</i>");
    return text;
}

// The job's result: the written file, and the memory comparison or why there is none.
struct DeployOutcome {
    DeployResult result;
    std::optional<DeployMemoryComparison> memory;
    QString memoryError;
    bool memoryCancelled = false;
};

// The job: deployModel, then for TFLite compareDeployMemory on the written file. Percent of the
// bar with the stage's words: deployModel's stages take the first 70 % (all of it for ONNX), the
// memory comparison the rest.
DeployOutcome deployAndCompare(const DeployRequest& rq, const JobControl& job)
{
    const bool tflite = rq.format == DeployFormat::TFLite;
    auto comparing = std::make_shared<bool>(false);
    JobControl inner = job;
    inner.progress = [job, comparing, tflite](std::size_t done, std::size_t total, const std::string& stage) {
        double f = total ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
        QString text = stageText(stage);
        if (stage == "calibrating BN") {   // BN re-calibration sits inside prepareModel's second third
            f = (1.0 + f) / 3.0;
            text += QStringLiteral(" %1/%2").arg(done).arg(total);
        }
        const int value = *comparing ? 70 + static_cast<int>(30 * f) : static_cast<int>((tflite ? 70 : 100) * f);
        job.report(static_cast<std::size_t>(value), 100, text.toStdString());
    };
    DeployOutcome o;
    o.result = deployModel(rq, inner);
    if (!tflite) return o;
    // The written file on the engines that run it: the file is already there, so a cancel or an
    // error here keeps it and says so.
    *comparing = true;
    try {
        o.memory = compareDeployMemory(o.result, inner);
    } catch (const CancelledError&) {
        o.memoryCancelled = true;
    } catch (const std::exception& e) {
        o.memoryError = QString::fromUtf8(e.what());
    }
    return o;
}

// The images the device is given: the test split of the calibration data's Fashion-MNIST (never the
// holdout images the int8 ranges came from), a folder as it is; synthetic LCG images without data.
constexpr int kDeviceImages = 10;

std::string deviceDataFor(const std::string& calibration)
{
    if (calibration.rfind("fashion-mnist", 0) == 0) return fashionMnistDir().empty() ? "synthetic" : "fashion-mnist:test";
    return calibration.empty() ? "synthetic" : calibration;
}

QString deviceInputsText(const std::string& data)
{
    if (data == "synthetic") return QStringLiteral("%1 synthetic LCG images").arg(kDeviceImages);
    if (data == "fashion-mnist:test") return QStringLiteral("%1 Fashion-MNIST test images").arg(kDeviceImages);
    return QStringLiteral("the first %1 images of %2").arg(kDeviceImages).arg(QString::fromStdString(data));
}

// The device job's stages (runTfliteOnDevice's), said for people with the engine first.
QString deviceStageText(DeviceEngine e, const std::string& stage)
{
    QString words = QString::fromStdString(stage);
    if (stage == "read") words = QStringLiteral("reading the file, the workbench's outputs");
    else if (stage == "device")
        words = e == DeviceEngine::TinyEngine ? QStringLiteral("its code generator, compile and link, QEMU run")
                                              : QStringLiteral("the runtime for the M7 (cached), compile and link, QEMU run");
    else if (stage == "host") words = QStringLiteral("TFLM built for the host on the same inputs");
    else if (stage == "compare") words = QStringLiteral("the device's outputs against Int8Forward");
    return QStringLiteral("%1: %2").arg(QString::fromLatin1(deviceEngineTitle(e)), words);
}

// The device job's result: each engine's run, or why the file was refused before any ran.
struct DeviceRuns {
    std::vector<TfliteEngineRun> runs;
    QString refused;
};

// TFLM + CMSIS-NN, then TinyEngine, each its own answer (a refusal or a missing package is a row,
// not an error of the job); a corrupt or missing file is refused before either. Cancel during
// TFLM ends the job (CancelledError); during TinyEngine it keeps TFLM's verdict.
DeviceRuns runEngines(const std::string& file, const std::string& data, const JobControl& job)
{
    DeviceRuns out;
    job.report(0, 100, deviceStageText(DeviceEngine::Tflm, "read").toStdString());
    try {
        readTflite(file);
    } catch (const std::exception& e) {
        out.refused = QString::fromUtf8(e.what());
        return out;
    }
    const DeviceEngine engines[] = {DeviceEngine::Tflm, DeviceEngine::TinyEngine};
    for (int i = 0; i < 2; ++i) {
        TfliteEngineRun run;
        run.engine = engines[i];
        try {
            job.check();
        } catch (const CancelledError&) {
            if (i == 0) throw;
            run.cancelled = true;
            out.runs.push_back(std::move(run));
            continue;
        }
        run.missing_package = missingTfliteDevicePackage(run.engine);
        if (run.missing_package.empty()) {
            TfliteDeviceRunOptions o;
            o.tflite = file;
            o.engine = run.engine;
            o.images = kDeviceImages;
            o.data = data;
            JobControl inner = job;
            const DeviceEngine e = run.engine;
            inner.progress = [job, i, e](std::size_t done, std::size_t total, const std::string& stage) {
                const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
                job.report(static_cast<std::size_t>(50 * i + 50 * f), 100, deviceStageText(e, stage).toStdString());
            };
            try {
                run.result = runTfliteOnDevice(o, inner);
            } catch (const CancelledError&) {
                if (i == 0) throw;
                run.cancelled = true;
            } catch (const std::exception& e) {
                run.error = e.what();
            }
        }
        out.runs.push_back(std::move(run));
    }
    return out;
}

}  // namespace

DeployDialog::DeployDialog(ModelSource model, const QString& stem, QWidget* parent) : QDialog(parent), model_(std::move(model))
{
    setWindowTitle(QStringLiteral("Deploy"));
    QString fileStem = stem;
    if (fileStem.isEmpty())
        fileStem = model_.asSubnet() ? QString::fromStdString(model_.asSubnet()->space.name) + QStringLiteral("-subnet")
                                     : QString::fromStdString(model_.network().name);
    jobs_ = new JobRunner(this);
    auto* layout = new QVBoxLayout(this);
    auto* modelLine = new QLabel(describeModel(model_));
    modelLine->setTextFormat(Qt::RichText);
    modelLine->setWordWrap(true);
    modelLine->setToolTip(QString::fromStdString(model_.describe()));
    layout->addWidget(modelLine);
    form_ = new DeployForm(fileStem, model_);
    layout->addWidget(form_);
    layout->addLayout(buildButtons());
    progress_ = new JobProgressBar(jobs_);
    progress_->setFormat(QStringLiteral("ready"));
    layout->addWidget(progress_);
    status_ = new QLabel(QStringLiteral("Press Deploy to write the file; for TFLite the memory is then compared on three engines."));
    status_->setWordWrap(true);
    layout->addWidget(status_);
    layout->addWidget(buildResults(), 1);
    // The whole table of a TFLite deploy in view (its reasons wrap) where the screen has room; on a
    // smaller screen the dialog fits it and the result scrolls, the buttons above it in view.
    fitDialogToScreen(this, QSize(1000, 820));

    // The shown results against the newly chosen board: no need to deploy or run again.
    connect(form_, &DeployForm::boardChanged, this, &DeployDialog::showBoard);
    // One runner, two jobs: the deploy's signals end the deploy; the device run ends in its own handlers.
    connect(jobs_, &JobRunner::cancelled, this, [this] {
        if (job_ == Job::Deploy) endJob(false, QString());
    });
    connect(jobs_, &JobRunner::failed, this, [this](const QString& e) {
        if (job_ == Job::Deploy) endJob(false, e);
    });
    connect(jobs_, &JobRunner::finished, this, [this](bool ok) {
        const Job j = job_;
        job_ = Job::None;
        if (j == Job::Deploy && ok) endJob(true, QString());
        if (j == Job::Device) {
            setRunning(false);
            Q_EMIT deviceRunFinished();
        }
    });
}

DeployDialog::~DeployDialog() = default;   // jobs_ cancels and waits

QLayout* DeployDialog::buildButtons()
{
    auto* buttons = new QHBoxLayout;
    deploy_ = new QPushButton(QStringLiteral("Deploy"));
    deploy_->setDefault(true);
    runDevice_ = new QPushButton(QStringLiteral("Run on an emulated Cortex-M7"));
    runDevice_->setAutoDefault(false);
    runDevice_->setToolTip(QStringLiteral("Runs the written .tflite on an emulated Cortex-M7 (QEMU mps2-an500): TensorFlow Lite Micro with "
                                          "CMSIS-NN's kernels, then TinyEngine's generated code where its generator accepts the model. "
                                          "Compares the device's int8 outputs with the workbench's and measures arena, SRAM, flash and "
                                          "instructions per inference (docs/DEPLOY.md \"Deploy dialog\")"));
    runDevice_->hide();   // until a TFLite deploy
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setEnabled(false);
    auto* close = new QPushButton(QStringLiteral("Close"));
    close->setAutoDefault(false);
    buttons->addWidget(deploy_);
    buttons->addWidget(runDevice_);
    buttons->addWidget(cancel_);
    buttons->addStretch(1);
    buttons->addWidget(close);
    connect(deploy_, &QPushButton::clicked, this, &DeployDialog::deploy);
    connect(runDevice_, &QPushButton::clicked, this, &DeployDialog::runOnDevice);
    connect(cancel_, &QPushButton::clicked, this, &DeployDialog::cancel);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    return buttons;
}

// The result (summary, bars, table) scrolls, so the dialog fits a 1280×720 screen.
QWidget* DeployDialog::buildResults()
{
    summary_ = new QLabel;
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->hide();
    memoryView_ = new DeployMemoryView;
    memoryView_->hide();
    deviceView_ = new TfliteDeviceView;
    deviceView_->hide();   // until the first device run
    auto* results = new QWidget;
    auto* resultsLayout = new QVBoxLayout(results);
    resultsLayout->setContentsMargins(0, 0, 0, 0);
    resultsLayout->addWidget(deviceView_);   // first: what the last click asked for
    resultsLayout->addWidget(summary_);
    resultsLayout->addWidget(memoryView_, 1);
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(results);
    return scroll;
}

void DeployDialog::setFormat(DeployFormat f) { form_->setFormat(f); }

DeployFormat DeployDialog::format() const { return form_->format(); }

void DeployDialog::setCalibrationImages(int n) { form_->setCalibrationImages(n); }

void DeployDialog::setCalibrationData(const QString& data) { form_->setCalibrationData(data); }

QString DeployDialog::calibrationData() const { return form_->calibrationData(); }

void DeployDialog::setBnImages(int n) { form_->setBnImages(n); }

void DeployDialog::setBoard(const QString& name) { form_->setBoard(name); }

QString DeployDialog::boardName() const { return form_->boardName(); }

void DeployDialog::setOutputFile(const QString& path) { form_->setOutputFile(path); }

QString DeployDialog::outputFile() const { return form_->outputFile(); }

QString DeployDialog::statusText() const { return status_->text(); }

QString DeployDialog::progressText() const { return progress_->format(); }

QString DeployDialog::summaryText() const { return result_ ? QTextDocumentFragment::fromHtml(summary_->text()).toPlainText() : QString(); }

const QTableWidget* DeployDialog::memoryTable() const { return memoryView_->table(); }

bool DeployDialog::memoryShown() const { return memory_.has_value() && !memoryView_->isHidden(); }

const CapacityBar* DeployDialog::sramBar(const QString& engine) const { return memoryView_->sramBar(engine); }

const CapacityBar* DeployDialog::flashBar() const { return memoryView_->flashBar(); }

const CapacityBar* DeployDialog::fileFlashBar() const { return memoryView_->fileFlashBar(); }

void DeployDialog::cancel()
{
    if (!jobs_->busy()) return;
    jobs_->cancel();
    progress_->setFormat(QStringLiteral("cancelling…"));
}

void DeployDialog::setRunning(bool running)
{
    running_ = running;
    deploy_->setEnabled(!running);
    runDevice_->setEnabled(!running);
    cancel_->setEnabled(running);
    form_->setLocked(running);
}

bool DeployDialog::runOnDeviceShown() const { return !runDevice_->isHidden(); }

bool DeployDialog::canRunOnDevice() const { return runOnDeviceShown() && runDevice_->isEnabled(); }

bool DeployDialog::deviceViewShown() const { return !deviceView_->isHidden(); }

QString DeployDialog::deviceInputs() const { return deviceInputsText(deviceData_); }

void DeployDialog::showBoard()
{
    if (memory_) showMemory();
    deviceView_->setBoard(presetBoard(boardName().toStdString()));
}

void DeployDialog::runOnDevice()
{
    if (jobs_->busy() || !result_ || result_->format != DeployFormat::TFLite) return;
    const std::string file = result_->out;
    const std::string data = deviceData_;
    setRunning(true);
    job_ = Job::Device;
    clock_.start();
    deviceView_->setBoard(presetBoard(boardName().toStdString()));
    deviceView_->showRunning(deviceInputs());
    deviceView_->show();
    progress_->restart(deviceStageText(DeviceEngine::Tflm, "read"));
    status_->setText(QStringLiteral("Running %1 on the emulated Cortex-M7…").arg(QString::fromStdString(file).toHtmlEscaped()));
    jobs_->run([file, data](const JobControl& job) { return runEngines(file, data, job); },
               [this](const DeviceRuns& d) {
                   if (!d.refused.isEmpty()) {
                       progress_->setFormat(QStringLiteral("not run"));
                       deviceView_->showRefused(d.refused);
                   } else {
                       progress_->finish(QStringLiteral("run on the device"));
                       deviceView_->showRuns(d.runs, deviceInputs());
                   }
                   status_->setText(QStringLiteral("Ran on the emulated Cortex-M7 in %1 s.")
                                        .arg(static_cast<double>(clock_.elapsed()) / 1000.0, 0, 'f', 1));
               },
               [this](const JobFailure& f) {
                   progress_->setFormat(f.cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed"));
                   if (f.cancelled) deviceView_->showCancelled();
                   else deviceView_->showRefused(f.message);
                   status_->setText(f.cancelled ? QStringLiteral("The device run was cancelled; the file is kept.") : QStringLiteral("The device run failed."));
               });
}

void DeployDialog::clearResult()
{
    result_.reset();
    memory_.reset();
    summary_->clear();
    summary_->hide();
    memoryView_->hide();
    memoryView_->clear();
    deviceView_->clear();
    deviceView_->hide();
    runDevice_->hide();
}

void DeployDialog::deploy()
{
    if (jobs_->busy()) return;
    const DeployRequest rq = form_->request(model_);
    clearResult();
    progress_->setValue(0);
    try {
        checkOutputFile(rq.out);
    } catch (const std::exception& e) {
        progress_->setFormat(QStringLiteral("not written"));
        status_->setText(colouredHtml("status.error", QString::fromUtf8(e.what())));
        Q_EMIT deployed(false);
        return;
    }
    deviceData_ = deviceDataFor(rq.quantize.calib_data);
    setRunning(true);
    job_ = Job::Deploy;
    clock_.start();
    progress_->setFormat(QStringLiteral("starting"));
    status_->setText(QStringLiteral("Deploying to %1…").arg(QString::fromStdString(rq.out).toHtmlEscaped()));
    jobs_->run([rq](const JobControl& job) { return deployAndCompare(rq, job); },
               [this](DeployOutcome o) {
                   result_ = std::move(o.result);
                   memory_ = std::move(o.memory);
                   progress_->finish(QStringLiteral("written"));
                   QString status = QStringLiteral("Deployed in %1 s%2.")
                                        .arg(static_cast<double>(clock_.elapsed()) / 1000.0, 0, 'f', 1)
                                        .arg(memory_ ? QStringLiteral(", the memory compared on three engines") : QString());
                   if (o.memoryCancelled) status += QStringLiteral(" The memory comparison was cancelled.");
                   else if (!o.memoryError.isEmpty())
                       status += QLatin1Char(' ') + colouredHtml("status.error", QStringLiteral("The memory comparison failed: ") + o.memoryError);
                   status_->setText(status);
                   showResult();
               });
}

void DeployDialog::endJob(bool ok, const QString& error)
{
    setRunning(false);
    if (!ok) {
        progress_->setFormat(error.isEmpty() ? QStringLiteral("cancelled") : QStringLiteral("failed"));
        status_->setText(colouredHtml("status.error", error.isEmpty() ? QStringLiteral("Cancelled: nothing was written.") : error));
    }
    Q_EMIT deployed(ok);
}

void DeployDialog::showResult()
{
    summary_->setText(summaryHtml(*result_));
    summary_->show();
    if (memory_) showMemory();
    runDevice_->setVisible(result_->format == DeployFormat::TFLite);
}

void DeployDialog::showMemory()
{
    memoryView_->showMemory(*memory_, presetBoard(boardName().toStdString()));
    memoryView_->show();
}

bool DeployDialog::waitForIdle(int timeoutMs) { return jobs_->waitForIdle(timeoutMs); }

}  // namespace tinyscope::ui
