#include "ExportDialog.h"

#include "DeviceVerdictView.h"
#include "ExportFindingsView.h"
#include "ExportOptionsForm.h"
#include "JobProgressBar.h"
#include "JobRunner.h"
#include "Palette.h"
#include "ScreenFit.h"

#include "device/DeviceRunner.h"
#include "io/Text.h"
#include "tinyengine/BoardFit.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {

// The device run's stages, said for people; the stage's name first.
QString stageWords(const QString& stage)
{
    if (stage == QLatin1String("tools")) return stage + QStringLiteral(": looking for the cross compiler, QEMU and Python");
    if (stage == QLatin1String("device")) return stage + QStringLiteral(": TinyEngine's code generator, compile and link, QEMU run");
    if (stage == QLatin1String("compare")) return stage + QStringLiteral(": the device's logits against Int8Forward");
    return stage;
}

// A checked plan, with the board's findings added when a board was chosen.
struct Checked {
    std::shared_ptr<const ExportPlan> plan;
    QString boardLine;   // the export's use of the chosen board
};

Checked planWithBoard(const ExportRequest& rq, const std::string& boardName, const JobControl& job)
{
    auto plan = std::make_shared<ExportPlan>(planModelExport(rq, job));
    Checked c;
    if (!boardName.empty()) {
        const BoardProfile board = presetBoard(boardName);
        const BoardUse use = boardUse(*plan);
        for (Finding& f : checkBoardFit(board, use)) plan->findings.push_back(std::move(f));
        c.boardLine = QStringLiteral("Board %1: SRAM %2 of %3 B (memory ledger), flash %4 of %5 B (parameters).")
                          .arg(QString::fromStdString(board.name))
                          .arg(QString::fromStdString(groupThousands(use.sram_bytes)))
                          .arg(QString::fromStdString(groupThousands(board.sram_bytes)))
                          .arg(QString::fromStdString(groupThousands(use.flash_bytes)))
                          .arg(QString::fromStdString(groupThousands(board.flash_bytes)));
    }
    c.plan = std::move(plan);
    return c;
}

// The device run of a written export.
struct Verified {
    std::optional<DeviceRunResult> result;
    QString missing;   // a Debian package the device run needs
};

// As `tinyscope device-run` without options: two synthetic LCG images, one training step on image 0
// with class 3, TinyEngine's arithmetic, the default kernel cache, a temporary build folder.
const char* const kVerifyInputs = "2 synthetic LCG images, one training step on image 0 with class 3";

Verified runVerification(const std::string& exportDir, const JobControl& job)
{
    DeviceRunOptions o;
    o.export_dir = exportDir;
    o.synthetic_images = 2;
    o.labels = {3};
    o.arithmetic = Int8Arithmetic::TinyEngine;
    Verified v;
    job.report(0, 3, "tools");
    // Checked first so a missing package is the whole answer (runOnDevice would say the same in an error).
    if (const std::string pkg = missingDevicePackage(); !pkg.empty()) {
        v.missing = QString::fromStdString(pkg);
        return v;
    }
    job.check();
    v.result = runOnDevice(o, job);
    return v;
}

}  // namespace

ExportDialog::ExportDialog(ExportRequest request, QWidget* parent) : QDialog(parent), request_(std::move(request))
{
    setWindowTitle(QStringLiteral("Export to TinyEngine"));
    jobs_ = new JobRunner(this);
    auto* layout = new QVBoxLayout(this);
    auto* model = new QLabel(QStringLiteral("<b>%1</b><br>scheme %2")
                                 .arg(QString::fromStdString(request_.model.describe()).toHtmlEscaped(),
                                      QString::fromStdString(request_.scheme_label)
                                          .toHtmlEscaped()));
    model->setWordWrap(true);
    layout->addWidget(model);
    options_ = new ExportOptionsForm(request_);
    layout->addWidget(options_);
    findings_ = new ExportFindingsView;
    layout->addWidget(new QLabel(QStringLiteral("Checker (TINYENGINE_JSON_SPEC §9) — shown before anything is written:")));
    layout->addWidget(findings_, 1);
    status_ = new QLabel(QStringLiteral("Press Check to quantize, build the graph and run the checker."));
    status_->setWordWrap(true);
    layout->addWidget(status_);
    verdict_ = new DeviceVerdictView;
    verdict_->hide();   // until the first verification
    layout->addWidget(verdict_, 2);   // a verdict gets the room; its lines scroll inside it (issue 47)
    progress_ = new JobProgressBar(jobs_, stageWords);
    layout->addWidget(progress_);
    layout->addLayout(buildButtons());
    fitDialogToScreen(this, QSize(900, 640));   // a verdict scrolls inside its box: Close stays in view

    connect(options_, &ExportOptionsForm::planChanged, this, &ExportDialog::invalidate);
    connect(options_, &ExportOptionsForm::boardChanged, this, [this] { verdict_->setBoard(options_->board()); });
    connect(options_, &ExportOptionsForm::folderChanged, this, &ExportDialog::updateWrite);
}

ExportDialog::~ExportDialog() = default;   // jobs_ cancels and waits

QLayout* ExportDialog::buildButtons()
{
    auto* buttons = new QHBoxLayout;
    check_ = new QPushButton(QStringLiteral("Check"));
    write_ = new QPushButton(QStringLiteral("Write files"));
    write_->setEnabled(false);
    verify_ = new QPushButton(QStringLiteral("Verify on an emulated Cortex-M7"));
    verify_->setToolTip(QStringLiteral("Runs the written files through TinyEngine's code generator, arm-none-eabi-gcc and QEMU (mps2-an500) and "
                                       "compares the device's logits and training step with the workbench (docs/DEVICE_RUNNER.md)"));
    verify_->setEnabled(false);
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setEnabled(false);
    auto* close = new QPushButton(QStringLiteral("Close"));
    buttons->addWidget(check_);
    buttons->addWidget(write_);
    buttons->addWidget(verify_);
    buttons->addWidget(cancel_);
    buttons->addStretch(1);
    buttons->addWidget(close);
    connect(check_, &QPushButton::clicked, this, &ExportDialog::check);
    connect(write_, &QPushButton::clicked, this, &ExportDialog::write);
    connect(verify_, &QPushButton::clicked, this, &ExportDialog::verify);
    connect(cancel_, &QPushButton::clicked, jobs_, &JobRunner::cancel);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    return buttons;
}

void ExportDialog::setOutputFolder(const QString& dir) { options_->setOutputFolder(dir); }

void ExportDialog::setForm(ExportForm form) { options_->setForm(form); }

void ExportDialog::setBoard(const QString& name) { options_->setBoard(name); }

int ExportDialog::findingCount() const { return plan_ ? static_cast<int>(plan_->findings.size()) : 0; }

QString ExportDialog::statusText() const { return status_->text(); }

QString ExportDialog::progressText() const { return progress_->format(); }

bool ExportDialog::canVerify() const { return verify_->isEnabled(); }

void ExportDialog::invalidate()
{
    plan_.reset();
    findings_->clear();
    updateWrite();
    status_->setText(QStringLiteral("Settings changed: press Check again."));
}

void ExportDialog::updateWrite() { write_->setEnabled(plan_ && !running_ && !options_->outputFolder().isEmpty()); }

void ExportDialog::setRunning(bool running)
{
    running_ = running;
    check_->setEnabled(!running);
    cancel_->setEnabled(running);
    options_->setLocked(running);
    updateWrite();
    verify_->setEnabled(!running && !written_.isEmpty());
}

void ExportDialog::check()
{
    if (running_) return;
    ExportRequest rq = request_;
    rq.form = options_->form();
    rq.name = options_->name().toStdString();
    plan_.reset();
    findings_->clear();
    setRunning(true);
    progress_->restart(QStringLiteral("quantizing and building the graph"));
    status_->setText(QStringLiteral("Checking…"));
    const std::string boardName = options_->boardName().toStdString();
    jobs_->run([rq, boardName](const JobControl& job) { return planWithBoard(rq, boardName, job); },
               [this](Checked c) {
                   plan_ = std::move(c.plan);
                   boardLine_ = c.boardLine;
                   setRunning(false);
                   progress_->finish(QStringLiteral("checked"));
                   showPlan();
                   Q_EMIT checked(true);
               },
               [this](const JobFailure& f) {
                   setRunning(false);
                   progress_->setFormat(f.cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed"));
                   showError(f.cancelled ? QStringLiteral("cancelled") : f.message);
                   Q_EMIT checked(false);
               });
}

void ExportDialog::showError(const QString& text) { status_->setText(colouredHtml("status.error", text)); }

void ExportDialog::showPlan()
{
    const ExportPlan& p = *plan_;
    findings_->showFindings(p.findings);
    QString text = QStringLiteral("<b>%1-graph.json</b>: %2 ops (%3 forward + loss), %4 graph outputs, %5 form; %6 int8 arrays, %7 scales")
                       .arg(QString::fromStdString(p.name))
                       .arg(p.graph.liveOps())
                       .arg(p.graph.forward_ops)
                       .arg(p.graph.outputs.size())
                       .arg(QString::fromLatin1(exportFormName(p.form)))
                       .arg(p.params.arrays.size())
                       .arg(p.params.scales.size());
    if (p.identity_slices) text += QStringLiteral("; %1 identity strided_slice(s) for ratio-1 weight updates").arg(p.identity_slices);
    if (!boardLine_.isEmpty()) text += QStringLiteral("<br>") + boardLine_;
    text += QStringLiteral("<br>%1 error(s), %2 warning(s).").arg(p.errors()).arg(p.findings.size() - static_cast<std::size_t>(p.errors()));
    if (p.errors() && options_->strict()) text += QStringLiteral(" Writing is refused while “refuse on errors” is ticked.");
    status_->setText(text);
    updateWrite();
}

void ExportDialog::write()
{
    if (running_ || !plan_) return;
    const std::shared_ptr<const ExportPlan> plan = plan_;
    const std::string dir = options_->outputFolder().toStdString();
    const bool strict = options_->strict();
    setRunning(true);
    jobs_->run([plan, dir, strict](const JobControl& job) { return writeExport(*plan, dir, strict, job); },
               [this](const ExportedFiles& f) {
                   setRunning(false);
                   written_ = {QString::fromStdString(f.graph), QString::fromStdString(f.params), QString::fromStdString(f.scales)};
                   progress_->finish(QStringLiteral("written"));
                   verify_->setEnabled(true);
                   verdict_->hide();   // an earlier verdict was about the files written before
                   status_->setText(QStringLiteral("Wrote %1 (%2 B), %3 (%4 B) and %5.")
                                        .arg(written_[0].toHtmlEscaped())
                                        .arg(f.graph_bytes)
                                        .arg(written_[1].toHtmlEscaped())
                                        .arg(f.params_bytes)
                                        .arg(written_[2].toHtmlEscaped()));
                   Q_EMIT written(true);
               },
               [this](const JobFailure& f) {
                   setRunning(false);
                   progress_->setFormat(QStringLiteral("not written"));
                   showError(f.cancelled ? QStringLiteral("cancelled: nothing was written") : f.message);
                   Q_EMIT written(false);
               });
}

void ExportDialog::verify()
{
    if (running_ || written_.isEmpty()) return;
    const std::string exportDir = QFileInfo(written_.front()).absolutePath().toStdString();
    setRunning(true);
    verdict_->setBoard(options_->board());
    verdict_->showRunning();
    verdict_->show();
    progress_->restart(QStringLiteral("tools: looking for the cross compiler, QEMU and Python"));
    jobs_->run([exportDir](const JobControl& job) { return runVerification(exportDir, job); },
               [this](const Verified& v) {
                   setRunning(false);
                   if (!v.missing.isEmpty()) {
                       progress_->setFormat(QStringLiteral("a device tool is missing"));
                       verdict_->showMissingPackage(v.missing);
                   } else {
                       progress_->finish(QStringLiteral("verified"));
                       verdict_->showResult(*v.result, QString::fromLatin1(kVerifyInputs));
                   }
                   Q_EMIT verified();
               },
               [this](const JobFailure& f) {
                   setRunning(false);
                   progress_->setFormat(f.cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed"));
                   if (f.cancelled) verdict_->showCancelled();
                   else verdict_->showError(f.message);
                   Q_EMIT verified();
               });
}

bool ExportDialog::waitForIdle(int timeoutMs) { return jobs_->waitForIdle(timeoutMs); }

}  // namespace tinyscope::ui
