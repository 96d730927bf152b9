#include "ExportDialog.h"

#include "JobRunner.h"

#include "Palette.h"
#include "DeviceVerdictView.h"
#include "Error.h"
#include "device/DeviceRunner.h"
#include "io/Text.h"
#include "tinyengine/BoardFit.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace tinyscope::ui {

ExportDialog::ExportDialog(ExportRequest request, QWidget* parent) : QDialog(parent), request_(std::move(request))
{
    setWindowTitle(QStringLiteral("Export to TinyEngine"));
    auto* layout = new QVBoxLayout(this);
    model_ = new QLabel(QStringLiteral("<b>%1</b><br>scheme %2")
                            .arg(QString::fromStdString(request_.model.describe()).toHtmlEscaped(),
                                 QString::fromStdString(request_.scheme).toHtmlEscaped()));
    model_->setWordWrap(true);
    layout->addWidget(model_);

    auto* form = new QFormLayout;
    folder_ = new QLineEdit;
    auto* browse = new QPushButton(QStringLiteral("Browse…"));
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder_, 1);
    folderRow->addWidget(browse);
    form->addRow(QStringLiteral("Output folder"), folderRow);
    name_ = new QLineEdit(QString::fromStdString(request_.name));
    name_->setPlaceholderText(QStringLiteral("model name"));
    form->addRow(QStringLiteral("File stem"), name_);
    form_ = new QComboBox;
    form_->addItem(QStringLiteral("reference — MIT's compiler's graph (+ identity slices)"), int(ExportForm::Reference));
    form_->addItem(QStringLiteral("faithful — gradients summed at residual adds"), int(ExportForm::Faithful));
    form_->setCurrentIndex(request_.form == ExportForm::Reference ? 0 : 1);
    form->addRow(QStringLiteral("Form"), form_);
    board_ = new QComboBox;
    board_->addItem(QStringLiteral("none — no board check"), QString());
    for (const std::string& n : presetBoardNames()) {
        const BoardProfile b = presetBoard(n);
        board_->addItem(QStringLiteral("%1 — %2 KB SRAM, %3 KB flash, %4")
                            .arg(QString::fromStdString(b.name))
                            .arg(b.sram_bytes / 1024)
                            .arg(b.flash_bytes / 1024)
                            .arg(QString::fromStdString(b.core)),
                        QString::fromStdString(b.name));
    }
    board_->setToolTip(QStringLiteral("Check the export's SRAM (memory ledger), flash (parameters), DSP and FPU needs against a board (models/boards)"));
    form->addRow(QStringLiteral("Board"), board_);
    strict_ = new QCheckBox(QStringLiteral("Refuse to write when the checker finds errors"));
    strict_->setChecked(true);
    form->addRow(QString(), strict_);
    layout->addLayout(form);

    findings_ = new QTreeWidget;
    findings_->setColumnCount(4);
    findings_->setHeaderLabels({QStringLiteral("severity"), QStringLiteral("rule"), QStringLiteral("where"), QStringLiteral("finding")});
    findings_->setRootIsDecorated(false);
    findings_->setWordWrap(true);
    findings_->header()->setStretchLastSection(true);
    findings_->setMinimumHeight(160);
    layout->addWidget(new QLabel(QStringLiteral("Checker (TINYENGINE_JSON_SPEC §9) — shown before anything is written:")));
    layout->addWidget(findings_, 1);
    status_ = new QLabel(QStringLiteral("Press Check to quantize, build the graph and run the checker."));
    status_->setWordWrap(true);
    layout->addWidget(status_);
    verdict_ = new DeviceVerdictView;
    verdict_->hide();   // until the first verification
    layout->addWidget(verdict_);
    progress_ = new QProgressBar;
    progress_->setRange(0, 100);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    layout->addWidget(progress_);
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
    layout->addLayout(buttons);
    resize(760, 480);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, QStringLiteral("Output folder"), folder_->text());
        if (!d.isEmpty()) folder_->setText(d);
    });
    connect(check_, &QPushButton::clicked, this, &ExportDialog::check);
    connect(write_, &QPushButton::clicked, this, &ExportDialog::write);
    connect(verify_, &QPushButton::clicked, this, &ExportDialog::verify);
    jobs_ = new JobRunner(this);
    connect(cancel_, &QPushButton::clicked, jobs_, &JobRunner::cancel);
    connect(jobs_, &JobRunner::progress, this, [this](qint64 done, qint64 total, const QString& stage) {
        progress_->setValue(total ? static_cast<int>(100 * done / total) : 0);
        progress_->setFormat(stageWords(stage));
    });
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(form_, &QComboBox::currentIndexChanged, this, [this] { invalidate(); });
    connect(board_, &QComboBox::currentIndexChanged, this, [this] {
        invalidate();
        verdict_->setBoard(chosenBoard());
    });
    connect(name_, &QLineEdit::textEdited, this, [this] { invalidate(); });
    connect(folder_, &QLineEdit::textChanged, this, [this] { write_->setEnabled(plan_ && !running_ && !folder_->text().isEmpty()); });
}

ExportDialog::~ExportDialog() = default;   // jobs_ cancels and waits

void ExportDialog::setOutputFolder(const QString& dir) { folder_->setText(dir); }

void ExportDialog::setForm(ExportForm form) { form_->setCurrentIndex(form == ExportForm::Reference ? 0 : 1); }

void ExportDialog::setBoard(const QString& name) { board_->setCurrentIndex(std::max(0, board_->findData(name))); }

int ExportDialog::findingCount() const { return plan_ ? static_cast<int>(plan_->findings.size()) : 0; }

QString ExportDialog::statusText() const { return status_->text(); }

QString ExportDialog::progressText() const { return progress_->format(); }

bool ExportDialog::canVerify() const { return verify_->isEnabled(); }

std::optional<BoardProfile> ExportDialog::chosenBoard() const
{
    const std::string name = board_->currentData().toString().toStdString();
    if (name.empty()) return std::nullopt;
    return presetBoard(name);
}

void ExportDialog::invalidate()
{
    plan_.reset();
    findings_->clear();
    write_->setEnabled(false);
    status_->setText(QStringLiteral("Settings changed: press Check again."));
}

void ExportDialog::setRunning(bool running)
{
    running_ = running;
    check_->setEnabled(!running);
    cancel_->setEnabled(running);
    form_->setEnabled(!running);
    board_->setEnabled(!running);
    name_->setEnabled(!running);
    write_->setEnabled(!running && plan_ && !folder_->text().isEmpty());
    verify_->setEnabled(!running && !written_.isEmpty());
}

QString ExportDialog::stageWords(const QString& stage)
{
    // The device run's stages, said for people; the stage's name first.
    if (stage == QLatin1String("tools")) return stage + QStringLiteral(": looking for the cross compiler, QEMU and Python");
    if (stage == QLatin1String("device")) return stage + QStringLiteral(": TinyEngine's code generator, compile and link, QEMU run");
    if (stage == QLatin1String("compare")) return stage + QStringLiteral(": the device's logits against Int8Forward");
    return stage;
}

void ExportDialog::check()
{
    if (running_) return;
    ExportRequest rq = request_;
    rq.form = static_cast<ExportForm>(form_->currentData().toInt());
    rq.name = name_->text().trimmed().toStdString();
    plan_.reset();
    findings_->clear();
    setRunning(true);
    progress_->setValue(0);
    progress_->setFormat(QStringLiteral("quantizing and building the graph"));
    status_->setText(QStringLiteral("Checking…"));
    const std::string boardName = board_->currentData().toString().toStdString();
    struct Checked {
        std::shared_ptr<const ExportPlan> plan;
        QString boardLine;   // the export's use of the chosen board
    };
    jobs_->run(
        [rq, boardName](const JobControl& job) {
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
        },
        [this](Checked c) {
            plan_ = std::move(c.plan);
            boardLine_ = c.boardLine;
            setRunning(false);
            progress_->setValue(100);
            progress_->setFormat(QStringLiteral("checked"));
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

void ExportDialog::showError(const QString& text)
{
    status_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName("status.error"), text.toHtmlEscaped()));
}

void ExportDialog::showPlan()
{
    findings_->clear();
    const ExportPlan& p = *plan_;
    for (const Finding& f : p.findings) {
        auto* item = new QTreeWidgetItem({f.error() ? QStringLiteral("error") : QStringLiteral("warning"), QString::fromStdString(f.spec + " " + f.rule),
                                          QString::fromStdString(f.where), QString::fromStdString(f.message)});
        item->setForeground(0, paletteColor(f.error() ? "status.error" : "status.finding"));
        item->setToolTip(3, QString::fromStdString(f.message));
        findings_->addTopLevelItem(item);
    }
    if (p.findings.empty())
        findings_->addTopLevelItem(new QTreeWidgetItem({QStringLiteral("ok"), QString(), QString(), QStringLiteral("no findings: TinyEngine's code generator covers every op of this graph")}));
    findings_->resizeColumnToContents(0);
    findings_->resizeColumnToContents(1);
    findings_->resizeColumnToContents(2);
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
    if (p.errors() && strict_->isChecked()) text += QStringLiteral(" Writing is refused while “refuse on errors” is ticked.");
    status_->setText(text);
    write_->setEnabled(!folder_->text().isEmpty());
}

void ExportDialog::write()
{
    if (running_ || !plan_) return;
    const std::shared_ptr<const ExportPlan> plan = plan_;
    const std::string dir = folder_->text().toStdString();
    const bool strict = strict_->isChecked();
    setRunning(true);
    jobs_->run([plan, dir, strict](const JobControl& job) { return writeExport(*plan, dir, strict, job); },
               [this](const ExportedFiles& f) {
                   setRunning(false);
                   written_ = {QString::fromStdString(f.graph), QString::fromStdString(f.params), QString::fromStdString(f.scales)};
                   progress_->setValue(100);
                   progress_->setFormat(QStringLiteral("written"));
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
    DeviceRunOptions o;
    o.export_dir = QFileInfo(written_.front()).absolutePath().toStdString();
    // As `tinyscope device-run` without options: two synthetic LCG images, one training step on
    // image 0 with class 3, TinyEngine's arithmetic, the default kernel cache, a temporary build folder.
    o.synthetic_images = 2;
    o.labels = {3};
    o.arithmetic = Int8Arithmetic::TinyEngine;
    const QString inputs = QStringLiteral("2 synthetic LCG images, one training step on image 0 with class 3");
    setRunning(true);
    verdict_->setBoard(chosenBoard());
    verdict_->showRunning();
    verdict_->show();
    progress_->setValue(0);
    progress_->setFormat(QStringLiteral("tools: looking for the cross compiler, QEMU and Python"));
    struct Verified {
        std::optional<DeviceRunResult> result;
        QString missing;   // a Debian package the device run needs
    };
    jobs_->run(
        [o](const JobControl& job) {
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
        },
        [this, inputs](const Verified& v) {
            setRunning(false);
            if (!v.missing.isEmpty()) {
                progress_->setFormat(QStringLiteral("a device tool is missing"));
                verdict_->showMissingPackage(v.missing);
            } else {
                progress_->setValue(100);
                progress_->setFormat(QStringLiteral("verified"));
                verdict_->showResult(*v.result, inputs);
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
