#include "DeviceVerdictView.h"

#include "ScreenFit.h"

#include "Palette.h"
#include "CapacityBar.h"
#include "io/Text.h"
#include "UiText.h"

#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace tinyscope::ui {

namespace {

const QString kGreen = paletteName("status.pass"), kRed = paletteName("status.error"), kGrey = paletteName("text.note");

QString signedList(const std::vector<std::int64_t>& v)
{
    QStringList s;
    for (std::int64_t x : v) s << (x > 0 ? QStringLiteral("+%1").arg(x) : QString::number(x));
    return s.join(QLatin1Char(' '));
}

// The classifier bias rule (docs/DEVICE_RUNNER.md): equal, or the first element that differs.
QString biasText(const DeviceRunResult& r)
{
    const auto& d = r.classifier_bias_delta_device;
    const auto& p = r.classifier_bias_delta_predicted;
    const QString name = QString::fromStdString(r.classifier_bias);
    if (d == p) return QStringLiteral("classifier bias %1: the device's change (%2) equals the predicted change").arg(name, signedList(d));
    std::size_t o = 0;
    while (o < d.size() && o < p.size() && d[o] == p[o]) ++o;
    if (o >= d.size() || o >= p.size())
        return QStringLiteral("classifier bias %1: the device changed %2 elements, the prediction has %3").arg(name).arg(d.size()).arg(p.size());
    return QStringLiteral("classifier bias %1[%2]: changed by %3 on the device, the predicted change is %4").arg(name).arg(o).arg(d[o]).arg(p[o]);
}

bool biasMatches(const DeviceRunResult& r)
{
    return r.classifier_bias.empty() || r.classifier_bias_delta_device == r.classifier_bias_delta_predicted;
}

bool trainingMatches(const DeviceRunResult& r) { return !r.training_checked || r.training_match; }

QString trainingStepText(const DeviceRunResult& r)
{
    QString t;
    if (r.steps == 0) {
        t = QStringLiteral("no training step run");
    } else if (!r.training_checked) {
        t = QStringLiteral("training step not compared");
    } else if (r.training_match) {
        std::int64_t changed = 0, tolerated = 0;
        for (const DeviceParamCheck& c : r.params) {
            changed += c.changed_device;
            tolerated += c.at_boundary;
        }
        t = QStringLiteral("%1 equal%2 the workbench's (GraphInterpreter + TinyEngine's update): %3 arrays, %4 elements changed%5")
                .arg(r.steps == 1 ? QStringLiteral("training step") : QStringLiteral("%1 training steps").arg(r.steps))
                .arg(r.steps == 1 ? QStringLiteral("s") : QString())
                .arg(r.params.size())
                .arg(thousandsText(changed))
                .arg(tolerated > 0 ? QStringLiteral(", %1 within the gradient tolerance").arg(thousandsText(tolerated)) : QString());
    } else {
        t = QStringLiteral("training step differs from GraphInterpreter: %1 (max relative error %2)")
                .arg(QString::fromStdString(r.training_difference))
                .arg(r.max_param_rel_error, 0, 'g', 3);
    }
    return t;
}

}  // namespace

DeviceVerdictView::DeviceVerdictView(QWidget* parent) : QGroupBox(parent)
{
    setTitle(QStringLiteral("Emulated Cortex-M7 (QEMU mps2-an500): TinyEngine's generated code against the workbench"));
    // The lines and bars scroll inside the box: after Verify the dialog keeps its size and its
    // buttons in view (issue 47), and every line wraps to the box's width.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(2, 2, 2, 2);
    auto* content = new QWidget;
    outer->addWidget(verticalScrollArea(content));
    auto* layout = new QVBoxLayout(content);
    headline_ = wrappedTextLabel();
    QFont f = headline_->font();
    f.setBold(true);
    headline_->setFont(f);
    training_ = wrappedTextLabel();
    barsCaption_ = wrappedTextLabel();
    sram_ = new CapacityBar(QStringLiteral("SRAM"));
    flash_ = new CapacityBar(QStringLiteral("flash"));
    details_ = wrappedTextLabel();
    layout->addWidget(headline_);
    layout->addWidget(training_);
    layout->addWidget(sram_);
    layout->addWidget(flash_);
    layout->addWidget(barsCaption_);
    layout->addWidget(details_);
    sram_->hide();
    flash_->hide();
}

void DeviceVerdictView::setHeadline(const QString& text, const QString& colour)
{
    headline_->setText(text);
    headline_->setStyleSheet(QStringLiteral("color: %1").arg(colour));
}

void DeviceVerdictView::showRunning()
{
    state_ = State::Running;
    result_.reset();
    setHeadline(QStringLiteral("Running the export on the emulated Cortex-M7: TinyEngine's code generator, arm-none-eabi-gcc, QEMU "
                               "(about 30 s; a minute when TinyEngine's kernels are compiled for a new model)…"),
                kGrey);
    training_->clear();
    training_->hide();
    barsCaption_->clear();
    barsCaption_->hide();
    details_->clear();
    details_->hide();
    sram_->clear();
    flash_->clear();
    sram_->hide();
    flash_->hide();
}

void DeviceVerdictView::showMissingPackage(const QString& package)
{
    showRunning();
    state_ = State::MissingPackage;
    setHeadline(QStringLiteral("Cannot verify: a tool the emulated device needs is missing: install the Debian package %1").arg(package), kRed);
}

void DeviceVerdictView::showError(const QString& message)
{
    showRunning();
    state_ = State::Failed;
    setHeadline(QStringLiteral("Device run failed: %1").arg(message), kRed);
}

void DeviceVerdictView::showCancelled()
{
    showRunning();
    state_ = State::Cancelled;
    setHeadline(QStringLiteral("cancelled: the device pipeline was stopped, nothing was kept"), kGrey);
}

void DeviceVerdictView::showResult(const DeviceRunResult& r, const QString& inputs)
{
    showRunning();
    result_ = r;
    const bool match = r.inference_match && trainingMatches(r) && biasMatches(r);
    state_ = match ? State::Matches : State::Differs;
    const QString step = trainingStepText(r);
    if (!r.inference_match)
        setHeadline(QStringLiteral("Device differs: image %1, logit %2: device %3, workbench %4 (Int8Forward, TinyEngine arithmetic)")
                        .arg(r.first_difference.image)
                        .arg(r.first_difference.index)
                        .arg(r.first_difference.device)
                        .arg(r.first_difference.workbench),
                    kRed);
    else if (!trainingMatches(r))
        setHeadline(QStringLiteral("Device differs in the training step: %1 (max relative error %2)")
                        .arg(QString::fromStdString(r.training_difference))
                        .arg(r.max_param_rel_error, 0, 'g', 3),
                    kRed);
    else if (!biasMatches(r))
        setHeadline(QStringLiteral("Device differs in the training step: %1").arg(biasText(r)), kRed);
    else
        setHeadline(QStringLiteral("Device matches the workbench: logits of %1 image%2 equal Int8Forward (TinyEngine arithmetic); %3.")
                        .arg(r.images)
                        .arg(r.images == 1 ? QString() : QStringLiteral("s"))
                        .arg(step),
                    kGreen);
    QString train = QStringLiteral("Inputs: %1. Logits: %2 image%3 × %4 classes, %5; %6")
                        .arg(inputs)
                        .arg(r.images)
                        .arg(r.images == 1 ? QString() : QStringLiteral("s"))
                        .arg(r.classes)
                        .arg(r.inference_match ? QStringLiteral("all equal") : QStringLiteral("first difference above"))
                        .arg(r.steps > 0 && !r.training_checked ? step + QStringLiteral(" with GraphInterpreter") : step);
    if (!r.classifier_bias.empty()) train += QStringLiteral("; ") + biasText(r);
    training_->setText(train + QLatin1Char('.'));
    training_->show();

    auto perCall = [](const std::vector<std::int64_t>& v) { return v.empty() ? QStringLiteral("—") : thousandsText(v.front()); };
    details_->setText(QStringLiteral("Instructions (QEMU icount), not cycles: %1 per inference, %2 per training step.\n"
                                     "Times: codegen %3 s, compile + link %4 s%5, emulation %6 s.")
                          .arg(perCall(r.instructions_per_inference), perCall(r.instructions_per_step))
                          .arg(r.codegen_s, 0, 'f', 1)
                          .arg(r.compile_s, 0, 'f', 1)
                          .arg(r.kernel_archive_reused ? QStringLiteral(" (TinyEngine's kernels reused from the cache)") : QString())
                          .arg(r.emulate_s, 0, 'f', 1));
    details_->show();
    showBars();
}

void DeviceVerdictView::setBoard(const std::optional<BoardProfile>& board)
{
    board_ = board;
    if (result_) showBars();
}

void DeviceVerdictView::showBars()
{
    const DeviceRunResult& r = *result_;
    const BoardProfile b = board_ ? *board_ : presetBoard("stm32f746");
    const QString name = board_ ? QString::fromStdString(b.name) : QString::fromStdString(b.name) + QStringLiteral(": no board chosen");
    sram_->setBytes(r.sram_bytes, b.sram_bytes, name);
    flash_->setBytes(r.flash_bytes, b.flash_bytes, name);
    sram_->show();
    flash_->show();
    const bool fits = r.sram_bytes <= b.sram_bytes && r.flash_bytes <= b.flash_bytes;
    QString caption = QStringLiteral("The linked binary: SRAM = .data %1 + .bss %2 + stack high-water %3 B; flash = .text %4 + .rodata %5 + .data %1 B. "
                                     "The workbench's figures: memory ledger peak %6 B, parameters %7 B. ")
                          .arg(thousandsText(r.data_bytes), thousandsText(r.bss_bytes),
                               thousandsText(std::max(r.stack_inference_bytes, r.stack_training_bytes)), thousandsText(r.text_bytes),
                               thousandsText(r.rodata_bytes), thousandsText(r.ledger_sram_bytes), thousandsText(r.params_flash_bytes));
    caption += board_ ? QStringLiteral("It %1 the %2.").arg(fits ? QStringLiteral("fits") : QStringLiteral("does NOT fit"), QString::fromStdString(b.name))
                      : QStringLiteral("No board chosen: shown against the STM32F746 (TinyEngine's flags target it), which it %1.")
                            .arg(fits ? QStringLiteral("fits") : QStringLiteral("does NOT fit"));
    barsCaption_->setText(caption);
    barsCaption_->setStyleSheet(fits ? QString() : QStringLiteral("color: %1").arg(kRed));
    barsCaption_->show();
}

QString DeviceVerdictView::verdictText() const { return headline_->text(); }

QString DeviceVerdictView::trainingText() const { return training_->text(); }

QString DeviceVerdictView::detailsText() const { return details_->text(); }

}  // namespace tinyscope::ui
