#include "TfliteDeviceView.h"

#include "CapacityBar.h"
#include "Palette.h"

#include "io/Text.h"
#include "UiText.h"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace tinyscope::ui {

namespace {

QString engineTitle(DeviceEngine e) { return QString::fromLatin1(deviceEngineTitle(e)); }

QString arithmeticOf(DeviceEngine e)
{
    return e == DeviceEngine::TinyEngine ? QStringLiteral("TinyEngine arithmetic") : QStringLiteral("TFLite arithmetic");
}

QString plural(int n, const QString& one) { return QStringLiteral("%1 %2%3").arg(n).arg(one, n == 1 ? QString() : QStringLiteral("s")); }

// Instructions per inference over the images: one figure when every image took the same, else the range.
QString perInference(const std::vector<std::int64_t>& v)
{
    if (v.empty()) return QStringLiteral("—");
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return *lo == *hi ? thousandsText(*lo) : QStringLiteral("%1–%2").arg(thousandsText(*lo), thousandsText(*hi));
}

std::int64_t firstCount(const TfliteDeviceRunResult& r) { return r.instructions_per_inference.empty() ? 0 : r.instructions_per_inference.front(); }

void colour(QLabel* l, const char* role) { l->setStyleSheet(role ? QStringLiteral("color: %1").arg(paletteName(role)) : QString()); }

// The first difference of a run that differs, in words.
QString differenceText(const DeviceFirstDifference& d, const char* other)
{
    return QStringLiteral("image %1, output %2: device %3, %4 %5").arg(d.image).arg(d.index).arg(d.device).arg(QLatin1String(other)).arg(d.workbench);
}

}  // namespace

bool TfliteEngineRun::matches() const
{
    return result && result->inference_match && (!result->host_checked || result->host_match);
}

struct TfliteDeviceView::Column {
    DeviceEngine engine;
    bool shown = false;
    QLabel* name;
    QLabel* verdict;
    CapacityBar* arena;
    CapacityBar* sram;
    CapacityBar* flash;
    QLabel* instructions;
    QLabel* times;
    bool bars = false;

    void setShown(bool on)
    {
        shown = on;
        for (QWidget* w : std::initializer_list<QWidget*>{name, verdict, instructions, times}) w->setVisible(on);
        for (CapacityBar* b : {arena, sram, flash}) b->setVisible(on && bars);
    }
};

TfliteDeviceView::TfliteDeviceView(QWidget* parent) : QGroupBox(parent), board_(presetBoard("stm32f746"))
{
    setTitle(QStringLiteral("The .tflite file on an emulated Cortex-M7 (QEMU mps2-an500)"));
    auto* layout = new QVBoxLayout(this);
    headline_ = wrappedTextLabel();
    QFont bold = headline_->font();
    bold.setBold(true);
    headline_->setFont(bold);
    layout->addWidget(headline_);
    // One row per line and bar, a column per engine: the two engines' bars stay side by side
    // whatever their verdict lines' lengths.
    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(18);
    grid->setVerticalSpacing(3);
    const int labelWidth = QFontMetrics(bold).horizontalAdvance(QStringLiteral("arena")) + 14;
    for (DeviceEngine e : {DeviceEngine::Tflm, DeviceEngine::TinyEngine}) {
        auto c = std::make_unique<Column>();
        c->engine = e;
        c->name = new QLabel(engineTitle(e));
        c->name->setFont(bold);
        c->verdict = wrappedTextLabel();
        c->verdict->setAlignment(Qt::AlignLeft | Qt::AlignTop);
        c->arena = new CapacityBar(QStringLiteral("arena"));
        c->sram = new CapacityBar(QStringLiteral("SRAM"));
        c->flash = new CapacityBar(QStringLiteral("flash"));
        for (CapacityBar* b : {c->arena, c->sram, c->flash}) {
            b->setLabelWidth(labelWidth);
            b->setMinimumWidth(260);
        }
        c->instructions = wrappedTextLabel();
        c->times = wrappedTextLabel();
        colour(c->times, "text.note");
        const int col = static_cast<int>(columns_.size());
        int row = 0;
        for (QWidget* w : std::initializer_list<QWidget*>{c->name, c->verdict, c->arena, c->sram, c->flash, c->instructions, c->times})
            grid->addWidget(w, row++, col, Qt::AlignTop);
        grid->setColumnStretch(col, 1);
        columns_.push_back(std::move(c));
    }
    layout->addLayout(grid);
    caption_ = wrappedTextLabel();
    colour(caption_, "text.note");
    layout->addWidget(caption_);
    clear();
}

TfliteDeviceView::~TfliteDeviceView() = default;

TfliteDeviceView::Column* TfliteDeviceView::column(DeviceEngine engine) const
{
    for (const auto& c : columns_)
        if (c->engine == engine) return c.get();
    return nullptr;
}

void TfliteDeviceView::setHeadline(const QString& text, const QString& colour)
{
    headline_->setText(text);
    headline_->setStyleSheet(QStringLiteral("color: %1").arg(colour));
}

void TfliteDeviceView::clear()
{
    state_ = State::Empty;
    runs_.clear();
    headline_->clear();
    caption_->clear();
    caption_->hide();
    for (const auto& c : columns_) {
        c->bars = false;
        c->setShown(false);
        c->verdict->clear();
        c->instructions->clear();
        c->times->clear();
        c->bars = false;
        for (CapacityBar* b : {c->arena, c->sram, c->flash}) b->clear();
    }
}

void TfliteDeviceView::showRunning(const QString& inputs)
{
    clear();
    state_ = State::Running;
    setHeadline(QStringLiteral("Running the file on the emulated Cortex-M7 with %1: TFLM + CMSIS-NN, then TinyEngine — the runtime "
                               "built for the M7, the model linked into flash, QEMU (under a minute once the runtimes are cached; the first run builds them, "
                               "several minutes)…")
                    .arg(inputs),
                paletteName("text.note"));
}

void TfliteDeviceView::showRefused(const QString& message)
{
    clear();
    state_ = State::Refused;
    setHeadline(QStringLiteral("Not run: %1").arg(message), paletteName("status.error"));
}

void TfliteDeviceView::showCancelled()
{
    clear();
    state_ = State::Cancelled;
    setHeadline(QStringLiteral("cancelled: the device runs were stopped, nothing was kept"), paletteName("text.note"));
}

void TfliteDeviceView::showRuns(const std::vector<TfliteEngineRun>& runs, const QString& inputs)
{
    clear();
    runs_ = runs;
    const TfliteEngineRun* tflm = nullptr;
    for (const TfliteEngineRun& r : runs_)
        if (r.engine != DeviceEngine::TinyEngine) tflm = &r;
    QStringList matched;
    const TfliteEngineRun* differs = nullptr;
    const TfliteEngineRun* failed = nullptr;
    for (const TfliteEngineRun& r : runs_) {
        if (Column* c = column(r.engine == DeviceEngine::TinyEngine ? DeviceEngine::TinyEngine : DeviceEngine::Tflm)) showColumn(*c, r, tflm);
        if (r.result && r.matches()) matched << engineTitle(r.engine);
        else if (r.result && !differs) differs = &r;
        else if (!r.result && !failed && !r.cancelled) failed = &r;
    }
    if (differs) {
        state_ = State::Differs;
        const TfliteDeviceRunResult& d = *differs->result;
        setHeadline(d.inference_match
                        ? QStringLiteral("%1 on the device differs from TFLM on the host: %2").arg(engineTitle(differs->engine), differenceText(d.host_first_difference, "host"))
                        : QStringLiteral("%1 on the device differs from the workbench: %2 (Int8Forward, %3)")
                              .arg(engineTitle(differs->engine), differenceText(d.first_difference, "workbench"), arithmeticOf(differs->engine)),
                    paletteName("status.error"));
    } else if (!matched.isEmpty()) {
        state_ = State::Matches;
        setHeadline(QStringLiteral("The device matches the workbench: %1 gave the workbench's int8 outputs on all %2.")
                        .arg(matched.join(QStringLiteral(" and ")), inputs),
                    paletteName("status.pass"));
    } else if (failed) {
        state_ = State::Failed;
        setHeadline(failed->missing_package.empty()
                        ? QStringLiteral("Device run failed: %1").arg(QString::fromStdString(failed->error))
                        : QStringLiteral("Cannot run: a tool the emulated device needs is missing: install the Debian package %1")
                              .arg(QString::fromStdString(failed->missing_package)),
                    paletteName("status.error"));
    } else {
        state_ = State::Cancelled;
        setHeadline(QStringLiteral("cancelled: the device runs were stopped, nothing was kept"), paletteName("text.note"));
    }
    showBars();
}

void TfliteDeviceView::showColumn(Column& c, const TfliteEngineRun& run, const TfliteEngineRun* tflm)
{
    c.bars = run.result.has_value();
    c.setShown(true);
    c.name->setText(engineTitle(run.engine));
    if (!run.result) {
        if (run.cancelled) {
            c.verdict->setText(QStringLiteral("cancelled before it finished"));
            colour(c.verdict, "text.note");
        } else if (!run.missing_package.empty()) {
            c.verdict->setText(QStringLiteral("not run: install the Debian package %1").arg(QString::fromStdString(run.missing_package)));
            colour(c.verdict, "status.error");
        } else {
            // TinyEngine refusing a model (its generator, an op) is an answer, not a fault.
            c.verdict->setText(QStringLiteral("not run: %1").arg(QString::fromStdString(run.error)));
            colour(c.verdict, run.engine == DeviceEngine::TinyEngine ? "status.warn-dark" : "status.error");
        }
        return;
    }
    const TfliteDeviceRunResult& r = *run.result;
    QString v;
    if (!r.inference_match) {
        v = QStringLiteral("✗ differs from the workbench (Int8Forward, %1): %2").arg(arithmeticOf(run.engine), differenceText(r.first_difference, "workbench"));
    } else {
        v = QStringLiteral("✓ outputs equal the workbench's (Int8Forward, %1) on %2").arg(arithmeticOf(run.engine), plural(r.images, QStringLiteral("image")));
        if (r.host_checked && r.host_match) v += QStringLiteral("; TFLM built for the host gives the same");
        else if (r.host_checked)
            v += QStringLiteral("; ✗ TFLM on the host differs (a CMSIS-NN kernel rounds unlike the reference kernel): %1")
                     .arg(differenceText(r.host_first_difference, "host"));
        else if (run.engine != DeviceEngine::TinyEngine && !r.host_note.empty())
            v += QStringLiteral("; host TFLM not compared: %1").arg(QString::fromStdString(r.host_note));
    }
    c.verdict->setText(v);
    colour(c.verdict, run.matches() ? "status.pass" : "status.error");
    QString ins = QStringLiteral("%1 instructions per inference (QEMU icount, not cycles)").arg(perInference(r.instructions_per_inference));
    if (run.engine == DeviceEngine::TinyEngine && tflm && tflm->result && firstCount(*tflm->result) > 0 && firstCount(r) > 0)
        ins += QStringLiteral(": %1× TFLM's").arg(static_cast<double>(firstCount(r)) / static_cast<double>(firstCount(*tflm->result)), 0, 'f', 2);
    c.instructions->setText(ins);
    QString t = run.engine == DeviceEngine::TinyEngine ? QStringLiteral("code generator %1 s, ").arg(r.codegen_s, 0, 'f', 1) : QString();
    t += QStringLiteral("build %1 s%2, emulation %3 s, comparison %4 s")
             .arg(r.compile_s, 0, 'f', 1)
             .arg(r.runtime_reused ? QStringLiteral(" (runtime from the cache)") : QString())
             .arg(r.emulate_s, 0, 'f', 1)
             .arg(r.compare_s, 0, 'f', 1);
    c.times->setText(t);
}

void TfliteDeviceView::setBoard(const BoardProfile& board)
{
    board_ = board;
    if (!runs_.empty()) showBars();
}

void TfliteDeviceView::showBars()
{
    const QString sramOf = QString::fromStdString(board_.name) + QStringLiteral(" SRAM");
    const QString flashOf = QString::fromStdString(board_.name) + QStringLiteral(" flash");
    QStringList fits;
    for (const TfliteEngineRun& run : runs_) {
        if (!run.result) continue;
        const TfliteDeviceRunResult& r = *run.result;
        Column* c = column(run.engine == DeviceEngine::TinyEngine ? DeviceEngine::TinyEngine : DeviceEngine::Tflm);
        if (!c) continue;
        c->arena->setBytes(r.arena_bytes, board_.sram_bytes, sramOf);
        c->sram->setBytes(r.sram_bytes, board_.sram_bytes, sramOf);
        c->flash->setBytes(r.flash_bytes, board_.flash_bytes, flashOf);
        const bool tinyEngine = run.engine == DeviceEngine::TinyEngine;
        c->arena->setToolTip(c->arena->text() + (tinyEngine ? QStringLiteral("\nTinyEngine's buffer (PEAK_MEM): activations as its planner schedules them")
                                                            : QStringLiteral("\nTFLM's arena_used_bytes() on the device: planned activations + scratch + "
                                                                             "its persistent records")));
        c->sram->setToolTip(c->sram->text() +
                            QStringLiteral("\n= static %1 B (.data + .bss%2) + %3stack high-water %4 B")
                                .arg(thousandsText(r.static_sram_bytes), tinyEngine ? QStringLiteral(", its buffers included") : QStringLiteral(" without the arena"),
                                     tinyEngine ? QString() : QStringLiteral("arena %1 B + ").arg(thousandsText(r.arena_bytes)), thousandsText(r.stack_bytes)));
        c->flash->setToolTip(c->flash->text() + QStringLiteral("\n= .text %1 B + .rodata %2 B + the model %3 B + .data's load image %4 B")
                                                    .arg(thousandsText(r.text_bytes), thousandsText(r.rodata_bytes), thousandsText(r.model_bytes), thousandsText(r.data_bytes)));
        const bool ok = r.sram_bytes <= board_.sram_bytes && r.flash_bytes <= board_.flash_bytes;
        fits << QStringLiteral("%1 %2 the %3").arg(engineTitle(run.engine), ok ? QStringLiteral("fits") : QStringLiteral("does NOT fit"), QString::fromStdString(board_.name));
    }
    if (fits.isEmpty()) {
        caption_->hide();
        return;
    }
    caption_->setText(QStringLiteral("%1. From the linked binary and the run: arena = TFLM's arena_used_bytes() / TinyEngine's buffer; "
                                     "SRAM = .data + .bss + (TFLM) arena + stack high-water; flash = .text + .rodata + the model + .data. "
                                     "KB = 1,024 B; hover a bar for its parts.")
                          .arg(fits.join(QStringLiteral("; "))));
    caption_->show();
}

QString TfliteDeviceView::verdictText() const { return headline_->text(); }

QString TfliteDeviceView::engineText(DeviceEngine engine) const
{
    const Column* c = column(engine);
    return c && c->shown ? c->verdict->text() : QString();
}

QString TfliteDeviceView::instructionsText(DeviceEngine engine) const
{
    const Column* c = column(engine);
    return c ? c->instructions->text() : QString();
}

QString TfliteDeviceView::captionText() const { return caption_->text(); }

const CapacityBar* TfliteDeviceView::bar(DeviceEngine engine, Figure figure) const
{
    const Column* c = column(engine);
    if (!c) return nullptr;
    return figure == Figure::Arena ? c->arena : figure == Figure::Sram ? c->sram : c->flash;
}

bool TfliteDeviceView::barsShown(DeviceEngine engine) const
{
    const Column* c = column(engine);
    return c && c->bars;
}

}  // namespace tinyscope::ui
