#include "DeployDialog.h"

#include "DeployForm.h"
#include "DeployMemoryView.h"
#include "JobProgressBar.h"
#include "JobRunner.h"
#include "Palette.h"
#include "ScreenFit.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "space/SpacePresets.h"

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

QString bytesText(std::int64_t b) { return QString::fromStdString(groupThousands(b)); }

QString kb(std::int64_t b) { return QString::fromStdString(kilobytesText(b)); }

QString spaceOf(const ModelSpec& m) { return QString::fromStdString(m.space.empty() ? std::string(defaultSpaceName()) : m.space); }

// One line for people: which subnet of which checkpoint, and its figures from the cost model.
QString describeModel(const ModelSpec& m)
{
    if (m.supernet.empty()) return QString::fromStdString(m.describe()).toHtmlEscaped();
    QString text = QStringLiteral("Subnet of <b>%1</b> (space %2)")
                       .arg(QFileInfo(QString::fromStdString(m.supernet)).fileName().toHtmlEscaped(), spaceOf(m).toHtmlEscaped());
    if (!m.subnet) return text + QStringLiteral(": config %1").arg(QString::fromStdString(m.config.empty() ? "max" : m.config).toHtmlEscaped());
    try {
        const DesignSpace space = loadSpace(spaceOf(m).toStdString());
        const SubnetConfig& c = *m.subnet;
        int blocks = 0;
        for (int s = 0; s < space.numStages(); ++s) blocks += c.activeDepth(space, s);
        const CostSummary cost = CostModel(space).summary(c);
        text += QStringLiteral(": %1 px").arg(c.image_size);
        if (c.wid >= 0 && static_cast<std::size_t>(c.wid) < space.width_mult_list.size())
            text += QStringLiteral(", width ×%1").arg(space.width_mult_list[static_cast<std::size_t>(c.wid)]);
        text += QStringLiteral(", %1 blocks — %2 M MACs, peak SRAM %3, flash %4 (cost model, int8)")
                    .arg(blocks)
                    .arg(cost.millionMacs(), 0, 'f', 2)
                    .arg(kb(cost.peak_activation_bytes), kb(cost.flash_bytes));
    } catch (const std::exception& e) {
        text += QStringLiteral(" — <i>%1</i>").arg(QString::fromUtf8(e.what()).toHtmlEscaped());
    }
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
                       .arg(QString::fromStdString(r.out).toHtmlEscaped(), bytesText(static_cast<std::int64_t>(r.bytes)),
                            (r.format == DeployFormat::TFLite ? QStringLiteral("TFLite, int8") : QStringLiteral("ONNX, float32")) +
                                (r.batchnorm.empty() ? QString() : QStringLiteral("; BatchNorm: ") + QString::fromStdString(r.batchnorm).toHtmlEscaped()),
                            ops.join(QStringLiteral(", ")), tensor(r.input), tensor(r.output), bytesText(r.cost.macs),
                            bytesText(r.cost.peak_sram_bytes), bytesText(r.cost.flash_bytes));
    if (r.format != DeployFormat::TFLite)
        text += QStringLiteral("<br><i>The three-engine memory table is for the int8 TFLite file (the engines that run a "
                               "microcontroller model): choose TFLite and deploy again to see it.</i>");
    return text;
}

// The job's result: the written file, and the memory comparison or why there is none.
struct Outcome {
    DeployResult result;
    std::optional<DeployMemoryComparison> memory;
    QString memoryError;
    bool memoryCancelled = false;
};

// The job: deployModel, then for TFLite compareDeployMemory on the written file. Percent of the
// bar with the stage's words: deployModel's stages take the first 70 % (all of it for ONNX), the
// memory comparison the rest.
Outcome deployAndCompare(const DeployRequest& rq, const JobControl& job)
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
    Outcome o;
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

}  // namespace

DeployDialog::DeployDialog(ModelSpec model, const QString& stem, QWidget* parent) : QDialog(parent), model_(std::move(model))
{
    setWindowTitle(QStringLiteral("Deploy"));
    QString fileStem = stem;
    if (fileStem.isEmpty())
        fileStem = model_.supernet.empty() ? QString::fromStdString(model_.zoo) : spaceOf(model_) + QStringLiteral("-subnet");
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

    connect(form_, &DeployForm::boardChanged, this, [this] {
        // The shown result against the newly chosen board: no need to deploy again.
        if (memory_) showMemory();
    });
    connect(jobs_, &JobRunner::cancelled, this, [this] { endJob(false, QString()); });
    connect(jobs_, &JobRunner::failed, this, [this](const QString& e) { endJob(false, e); });
    connect(jobs_, &JobRunner::finished, this, [this](bool ok) {
        if (ok) endJob(true, QString());
    });
}

DeployDialog::~DeployDialog() = default;   // jobs_ cancels and waits

QLayout* DeployDialog::buildButtons()
{
    auto* buttons = new QHBoxLayout;
    deploy_ = new QPushButton(QStringLiteral("Deploy"));
    deploy_->setDefault(true);
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setEnabled(false);
    auto* close = new QPushButton(QStringLiteral("Close"));
    close->setAutoDefault(false);
    buttons->addWidget(deploy_);
    buttons->addWidget(cancel_);
    buttons->addStretch(1);
    buttons->addWidget(close);
    connect(deploy_, &QPushButton::clicked, this, &DeployDialog::deploy);
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
    auto* results = new QWidget;
    auto* resultsLayout = new QVBoxLayout(results);
    resultsLayout->setContentsMargins(0, 0, 0, 0);
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
    cancel_->setEnabled(running);
    form_->setLocked(running);
}

void DeployDialog::clearResult()
{
    result_.reset();
    memory_.reset();
    summary_->clear();
    summary_->hide();
    memoryView_->hide();
    memoryView_->clear();
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
    setRunning(true);
    clock_.start();
    progress_->setFormat(QStringLiteral("starting"));
    status_->setText(QStringLiteral("Deploying to %1…").arg(QString::fromStdString(rq.out).toHtmlEscaped()));
    jobs_->run([rq](const JobControl& job) { return deployAndCompare(rq, job); },
               [this](Outcome o) {
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
}

void DeployDialog::showMemory()
{
    memoryView_->showMemory(*memory_, presetBoard(boardName().toStdString()));
    memoryView_->show();
}

bool DeployDialog::waitForIdle(int timeoutMs) { return jobs_->waitForIdle(timeoutMs); }

}  // namespace tinyscope::ui
