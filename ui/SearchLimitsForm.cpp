#include "SearchLimitsForm.h"

#include "AppState.h"
#include "Palette.h"

#include "Error.h"
#include "io/Text.h"
#include "search/Feasibility.h"
#include "search/TinyEngineTrainingLimit.h"
#include "search/TrainingMemoryLimit.h"
#include "tinyengine/BoardFit.h"
#include "workspace/Workspace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

namespace {
constexpr int kSliderSteps = 1000;

int marginKB(std::int64_t bytes) { return static_cast<int>(bytes / 1024); }

QString boardLine(const BoardProfile& b)
{
    return QStringLiteral("%1: %2 KB SRAM, %3 KB flash, %4%5")
        .arg(QString::fromStdString(b.title.empty() ? b.name : b.title))
        .arg(b.sram_bytes / 1024)
        .arg(b.flash_bytes / 1024)
        .arg(QString::fromStdString(b.core))
        .arg(b.dsp && b.fpu != "none" ? QString() : QStringLiteral(" (no DSP or FPU: TinyEngine cannot train on it)"));
}

// What the SRAM limit counts under each runtime (search/SramRuntime.h).
const char* const kTinyEngineSram =
    "TinyEngine: our peak SRAM, MCUNet's rule — the largest int8 input + output of any layer as TinyEngine schedules its "
    "arena (the lab's KBPeakMemory)";
const char* const kTflmSram =
    "TFLM + CMSIS-NN: TensorFlow Lite Micro's arena_used_bytes() on the Cortex-M7, predicted exactly from the subnet — the "
    "activations as TFLM's greedy planner lays them out (the PAD ops' padded copies included) + kernel scratch + its "
    "persistent records; about twice our peak SRAM (limit key KBTflmArena)";

QString sramLabel(SramRuntime r) { return r == SramRuntime::Tflm ? QStringLiteral("TFLM arena") : QStringLiteral("peak SRAM (TinyEngine)"); }
}  // namespace

struct SearchLimitsForm::LimitRow {
    std::shared_ptr<const ConstraintQuantity> quantity;
    QCheckBox* on = nullptr;
    QSlider* slider = nullptr;
    QDoubleSpinBox* spin = nullptr;
    double lo = 0, hi = 1;   // slider range: least and greatest value in the space

    int toSlider(double v) const
    {
        return static_cast<int>(std::lround(std::clamp((v - lo) / (hi - lo), 0.0, 1.0) * kSliderSteps));
    }
    double fromSlider(int s) const { return lo + (hi - lo) * s / kSliderSteps; }
};

SearchLimitsForm::SearchLimitsForm(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buildLimits());
    layout->addWidget(buildTrainingLimit());
    syncRanges();
    onSramRuntimeChanged();   // the SRAM row's label and tooltips
    setLimit("params", 1000000, false);
    setLimit("KBFlash", 1000, false);
    applyWorkspaceLimits();
    connect(state_, &AppState::spaceChanged, this, [this] {
        syncRanges();
        applyWorkspaceLimits();
    });
}

SearchLimitsForm::~SearchLimitsForm() = default;

QWidget* SearchLimitsForm::buildLimits()
{
    auto* box = new QGroupBox(QStringLiteral("Limits"));
    auto* grid = new QGridLayout(box);
    int row = 0;
    for (const auto& q : Constraints::builtinQuantities()) {
        auto r = std::make_unique<LimitRow>();
        r->quantity = q;
        QString unit = QString::fromStdString(q->unit);
        r->on = new QCheckBox(QString::fromStdString(q->label));
        r->on->setToolTip(QStringLiteral("limit key %1").arg(QString::fromStdString(q->key)));
        r->spin = new QDoubleSpinBox;
        r->spin->setDecimals(q->key == "params" ? 0 : (q->key == "millionMACs" ? 2 : 1));
        r->spin->setSuffix(unit.isEmpty() ? QString() : QLatin1Char(' ') + unit);
        r->spin->setMinimumWidth(110);
        r->spin->setToolTip(QStringLiteral("Upper limit on %1: every subnet the search returns stays at or below it").arg(QString::fromStdString(q->label)));
        r->slider = new QSlider(Qt::Horizontal);
        r->slider->setRange(0, kSliderSteps);
        r->slider->setToolTip(QStringLiteral("Drag over the space's range of %1 (live mode re-runs the search as you drag)").arg(QString::fromStdString(q->label)));
        grid->addWidget(r->on, row, 0);
        grid->addWidget(r->spin, row, 1);
        grid->addWidget(r->slider, row + 1, 0, 1, 2);
        row += 2;
        LimitRow* raw = r.get();
        if (q->key == "KBPeakMemory") {
            // Which runtime's memory the SRAM limit bounds: the same KB, another figure per subnet.
            sramRow_ = raw;
            r->on->setText(sramLabel(SramRuntime::TinyEngine));
            sramRuntime_ = new QComboBox;
            sramRuntime_->setObjectName(QStringLiteral("sramRuntime"));
            sramRuntime_->addItem(QStringLiteral("TinyEngine (peak SRAM, MCUNet's rule)"), int(SramRuntime::TinyEngine));
            sramRuntime_->addItem(QStringLiteral("TFLM + CMSIS-NN (its arena)"), int(SramRuntime::Tflm));
            sramRuntime_->setItemData(0, QString::fromLatin1(kTinyEngineSram), Qt::ToolTipRole);
            sramRuntime_->setItemData(1, QString::fromLatin1(kTflmSram), Qt::ToolTipRole);
            sramRuntime_->setToolTip(QStringLiteral("<p>The runtime the subnet will run under: the SRAM limit bounds its memory.</p><p>%1.</p><p>%2.</p>"
                                                    "<p>Neither counts the code's own .data / .bss or the stack: the Deploy dialog's "
                                                    "\"Run on an emulated Cortex-M7\" measures those.</p>")
                                         .arg(QString::fromLatin1(kTinyEngineSram).toHtmlEscaped(), QString::fromLatin1(kTflmSram).toHtmlEscaped()));
            auto* line = new QHBoxLayout;
            auto* forLabel = new QLabel(QStringLiteral("for"));
            forLabel->setBuddy(sramRuntime_);
            line->addWidget(forLabel);
            line->addWidget(sramRuntime_, 1);
            grid->addLayout(line, row, 0, 1, 2);
            ++row;
            connect(sramRuntime_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
                onSramRuntimeChanged();
                onEdited(false);
            });
        }
        connect(r->spin, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this, raw](double v) {
            QSignalBlocker b(raw->slider);
            raw->slider->setValue(raw->toSlider(v));
            onEdited(false);
        });
        connect(r->slider, &QSlider::valueChanged, this, [this, raw](int s) {
            QSignalBlocker b(raw->spin);
            raw->spin->setValue(raw->fromSlider(s));
            onEdited(raw->slider->isSliderDown());
        });
        connect(r->slider, &QSlider::sliderReleased, this, [this] { onEdited(false); });
        connect(r->on, &QCheckBox::toggled, this, [this, raw](bool on) {
            raw->spin->setEnabled(on);
            raw->slider->setEnabled(on);
            onEdited(false);
        });
        limits_.push_back(std::move(r));
    }
    return box;
}

QWidget* SearchLimitsForm::buildTrainingLimit()
{
    trainBox_ = new QGroupBox(QStringLiteral("Fine-tuning memory on the device"));
    trainBox_->setCheckable(true);
    trainBox_->setChecked(false);
    trainBox_->setToolTip(QStringLiteral("Only subnets that can be fine-tuned on the device within the budget: inference peak + extra "
                                         "memory of sparse-update training with the pattern (docs/TRAINING_INSPECTOR.md), limit key %1; "
                                         "with TinyEngine on a board also what its export accepts, limit key %2 (docs/SEARCH.md)")
                              .arg(QString::fromLatin1(TrainingMemoryLimit::kKey), QString::fromLatin1(TinyEngineTrainingLimit::kKey)));
    auto* form = new QFormLayout(trainBox_);
    trainer_ = new QComboBox;
    trainer_->setObjectName(QStringLiteral("trainer"));
    trainer_->addItem(QStringLiteral("any runtime (memory only)"), int(Trainer::AnyRuntime));
    trainer_->addItem(QStringLiteral("TinyEngine on a board"), int(Trainer::TinyEngine));
    const QString memoryOnly = QStringLiteral("Any runtime: only the memory is checked, inference peak + extra memory of the pattern ≤ budget "
                                              "(the pattern is needed)");
    const QString engine = QStringLiteral("TinyEngine on a board: what <tt>tinyscope export --strict --board B</tt> checks —<br>"
                                          "• the export checker's rules on the reference-form training graph (forward and gradient kernels "
                                          "TinyEngine has, the stem, uint16 element counts, 10 classes, no squeeze-excite);<br>"
                                          "• the memory ledger's training peak + %1 KB (the binary) within the board's SRAM;<br>"
                                          "• the int8 parameters + %2 KB (code, kernels) within its flash, DSP and FPU present;<br>"
                                          "• the budget: inference peak + extra memory of the scheme ≤ budget.<br>"
                                          "An empty pattern: the best scheme per subnet (bias-only:T+pw1:W@R updating the most parameters "
                                          "the budget and kernels allow)")
                               .arg(marginKB(kBoardSramMargin))
                               .arg(marginKB(kBoardFlashMargin));
    trainer_->setItemData(0, memoryOnly, Qt::ToolTipRole);
    trainer_->setItemData(1, QStringLiteral("<p>%1</p>").arg(engine), Qt::ToolTipRole);
    trainer_->setToolTip(QStringLiteral("<p>Who fine-tunes the subnet on the device, i.e. what the limit checks.</p><p>%1.</p><p>%2.</p>")
                             .arg(memoryOnly, engine));
    board_ = new QComboBox;
    board_->setObjectName(QStringLiteral("board"));
    for (const std::string& name : presetBoardNames()) addBoard(presetBoard(name));
    board_->setToolTip(QStringLiteral("The board TinyEngine trains on: the ledger's training peak + %1 KB within its SRAM, the int8 "
                                      "parameters + %2 KB within its flash (with the TinyEngine trainer only)")
                           .arg(marginKB(kBoardSramMargin))
                           .arg(marginKB(kBoardFlashMargin)));
    trainBudget_ = new QDoubleSpinBox;
    trainBudget_->setObjectName(QStringLiteral("trainingBudget"));
    trainBudget_->setRange(1, 100000);
    trainBudget_->setDecimals(1);
    trainBudget_->setSingleStep(8);
    trainBudget_->setSuffix(QStringLiteral(" KB"));
    trainBudget_->setValue(320);   // replaced by the workspace board's SRAM below
    trainBudget_->setToolTip(QStringLiteral("SRAM available for fine-tuning on the device: inference working set + the pattern's extra "
                                            "memory must fit. It starts from the workspace board's SRAM and follows it"));
    trainPattern_ = new QLineEdit(QStringLiteral("bias-only:12"));
    trainPattern_->setObjectName(QStringLiteral("trainingPattern"));
    trainPattern_->setToolTip(QStringLiteral("bias-only[:N] | last:K | full | pw1:K@R[,R…] | classifier, joined by +\n"
                                             "e.g. bias-only:12+pw1:3@1/4\n"
                                             "With TinyEngine, empty: the best scheme per subnet"));
    trainNote_ = new QLabel;
    trainNote_->setObjectName(QStringLiteral("trainingNote"));
    trainNote_->setWordWrap(true);
    trainNote_->setTextFormat(Qt::RichText);
    form->addRow(QStringLiteral("Trainer"), trainer_);
    form->addRow(QStringLiteral("Board"), board_);
    form->addRow(QStringLiteral("Budget"), trainBudget_);
    form->addRow(QStringLiteral("Scheme pattern"), trainPattern_);
    form->addRow(trainNote_);
    connect(trainBox_, &QGroupBox::toggled, this, [this] { onEdited(false); });
    connect(trainBudget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { onEdited(false); });
    connect(trainPattern_, &QLineEdit::textChanged, this, [this] {
        checkTrainingPattern();
        onEdited(false);
    });
    connect(trainer_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
        onTrainerChanged();
        onEdited(false);
    });
    connect(board_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
        checkTrainingPattern();
        onEdited(false);
    });
    // The workspace's board (issue 47: one board, chosen in one place): this combo and the budget
    // follow it, and choosing a preset here chooses it for the workspace.
    auto followBoard = [this] {
        const int i = addBoard(state_->board());
        if (board_->currentIndex() != i) board_->setCurrentIndex(i);
        trainBudget_->setValue(static_cast<double>(state_->board().sram_bytes) / 1024.0);
    };
    followBoard();
    connect(state_, &AppState::boardChanged, this, followBoard);
    connect(board_, qOverload<int>(&QComboBox::activated), this, [this](int i) {
        const BoardProfile& b = boards_[static_cast<std::size_t>(i)];
        if (b.name == state_->board().name) return;
        try {
            if (presetBoard(b.name).toJson() == b.toJson()) state_->setBoard(QString::fromStdString(b.name));
        } catch (const std::exception&) {
            // a run's own board that is not a preset: this search only
        }
    });
    onTrainerChanged();
    return trainBox_;
}

int SearchLimitsForm::addBoard(const BoardProfile& board)
{
    const Json j = board.toJson();
    for (std::size_t i = 0; i < boards_.size(); ++i)
        if (boards_[i].toJson() == j) return static_cast<int>(i);
    // A re-opened run's board that is not a preset (or a preset's name with other figures) gets its own entry.
    const QString name = QString::fromStdString(board.name);
    const bool taken = board_->findText(name) >= 0;
    boards_.push_back(board);
    board_->addItem(taken ? QStringLiteral("%1 (from a run)").arg(name) : name);
    board_->setItemData(board_->count() - 1, boardLine(board), Qt::ToolTipRole);
    return board_->count() - 1;
}

void SearchLimitsForm::onTrainerChanged()
{
    const bool engine = trainer() == Trainer::TinyEngine;
    board_->setEnabled(engine);
    trainPattern_->setPlaceholderText(engine ? QStringLiteral("empty = best per subnet") : QStringLiteral("e.g. bias-only:12"));
    checkTrainingPattern();
}

SearchLimitsForm::Trainer SearchLimitsForm::trainer() const { return static_cast<Trainer>(trainer_->currentData().toInt()); }

QString SearchLimitsForm::boardName() const
{
    const int i = board_->currentIndex();
    return i >= 0 ? QString::fromStdString(boards_[static_cast<std::size_t>(i)].name) : QString();
}

QStringList SearchLimitsForm::boardNames() const
{
    QStringList out;
    for (const BoardProfile& b : boards_) out << QString::fromStdString(b.name);
    return out;
}

void SearchLimitsForm::setTrainer(Trainer trainer, const QString& board)
{
    int boardIndex = board_->currentIndex();
    if (!board.isEmpty()) {
        boardIndex = -1;
        for (std::size_t i = 0; i < boards_.size() && boardIndex < 0; ++i)
            if (QString::fromStdString(boards_[i].name) == board) boardIndex = static_cast<int>(i);
        if (boardIndex < 0) boardIndex = addBoard(presetBoard(board.toStdString()));   // InputError listing the presets
    }
    restoring_ = true;
    board_->setCurrentIndex(boardIndex);
    trainer_->setCurrentIndex(trainer_->findData(int(trainer)));
    restoring_ = false;
    onTrainerChanged();
}

void SearchLimitsForm::onEdited(bool fromDrag)
{
    if (!restoring_) Q_EMIT edited(fromDrag);
}

void SearchLimitsForm::checkTrainingPattern()
{
    const bool engine = trainer() == Trainer::TinyEngine;
    const QString text = trainPattern_->text();
    const QString where = engine ? QStringLiteral("; TinyEngine's kernels, %1's SRAM (ledger + %2 KB) and flash checked")
                                       .arg(boardName().toHtmlEscaped())
                                       .arg(marginKB(kBoardSramMargin))
                                 : QString();
    if (engine && text.trimmed().isEmpty()) {
        trainNote_->setText(QStringLiteral("<span style='color:%1'>the best scheme per subnet (bias-only:T+pw1:W@R updating the most "
                                           "parameters): inference peak + its extra memory ≤ budget%2</span>")
                                .arg(paletteName("text.note"), where));
        return;
    }
    try {
        TrainingSchemePattern::parse(text.toStdString());
        trainNote_->setText(QStringLiteral("<span style='color:%1'>inference peak + extra memory of the pattern ≤ budget%2</span>")
                                .arg(paletteName("text.note"), where));
    } catch (const std::exception& e) {
        trainNote_->setText(QStringLiteral("<span style='color:%1'>%2</span>")
                                .arg(paletteName("search.error"), QString::fromUtf8(e.what()).toHtmlEscaped()));
    }
}

void SearchLimitsForm::setTrainingLimit(double kb, const QString& pattern, bool enabled)
{
    restoring_ = true;
    trainBudget_->setValue(kb);
    trainPattern_->setText(pattern);
    trainBox_->setChecked(enabled);
    restoring_ = false;
    checkTrainingPattern();
}

void SearchLimitsForm::setConstraints(const Constraints& c, const QString& trainingPattern)
{
    for (auto& lr : limits_) {
        const Limit* l = c.find(lr->quantity->key);
        if (lr.get() == sramRow_ && !l) {   // the SRAM limit under either runtime brings its runtime back
            l = c.find("KBPeakMemory");
            if (!l) l = c.find(kTflmArenaKey);
        }
        setLimit(l ? l->key() : lr->quantity->key, l ? l->max : lr->spin->value(), l != nullptr);
    }
    if (const Limit* e = c.find(TinyEngineTrainingLimit::kKey)) {
        // The definition TinyEngineTrainingLimit wrote: {"pattern": "best" | PATTERN, "board": {...}}.
        const Json& d = e->quantity->definition;
        const std::string pattern = d.is_object() && d.contains("pattern") && d["pattern"].is_string() ? d["pattern"].get<std::string>() : "";
        int boardIndex = board_->currentIndex();
        if (d.is_object() && d.contains("board")) {
            try {
                boardIndex = addBoard(BoardProfile::fromJson(d["board"], "constraint_definitions.board"));
            } catch (const std::exception&) {
                // Restore (TinyEngineTrainingLimit::restore) read it already; keep the current board otherwise.
            }
        }
        restoring_ = true;
        board_->setCurrentIndex(boardIndex);
        trainer_->setCurrentIndex(trainer_->findData(int(Trainer::TinyEngine)));
        restoring_ = false;
        onTrainerChanged();
        setTrainingLimit(e->max, pattern == "best" ? QString() : QString::fromStdString(pattern), true);
        return;
    }
    const Limit* t = c.find(TrainingMemoryLimit::kKey);
    if (t) setTrainer(Trainer::AnyRuntime);
    setTrainingLimit(t ? t->max : trainBudget_->value(), t ? trainingPattern : trainPattern_->text(), t != nullptr);
}

void SearchLimitsForm::syncRanges()
{
    // The slider spans what the space can reach; the spin box goes beyond, so an impossible
    // limit can be typed and is explained.
    if (sramRow_) sramRow_->quantity = sramQuantityFor(sramRuntime());   // TFLM's is the space's own
    for (auto& r : limits_) syncRange(*r);
}

void SearchLimitsForm::syncRange(LimitRow& r)
{
    const bool was = restoring_;
    restoring_ = true;
    QuantityRange range = quantityRange(state_->space(), *r.quantity);
    r.lo = range.least;
    r.hi = std::max(range.greatest, range.least * 1.01);
    const double v = r.spin->value();
    r.spin->setRange(r.quantity->key == "params" ? 1000 : 1, r.hi * 2);
    r.spin->setSingleStep(r.quantity->key == "params" ? 10000 : (r.quantity->key == "millionMACs" ? 1 : 5));
    r.spin->setValue(v);
    {
        QSignalBlocker keep(r.slider);   // the spin box keeps the typed KB, not the slider's step
        r.slider->setValue(r.toSlider(v));
    }
    r.slider->setToolTip(QStringLiteral("%1 to %2 %3 in this space")
                             .arg(QString::fromStdString(formatQuantity(r.lo)), QString::fromStdString(formatQuantity(r.hi)),
                                  QString::fromStdString(r.quantity->unit)));
    restoring_ = was;
}

std::shared_ptr<const ConstraintQuantity> SearchLimitsForm::sramQuantityFor(SramRuntime runtime) const
{
    if (runtime == SramRuntime::TinyEngine) return sramQuantity(state_->space(), runtime);
    const std::string key = AppState::keyOf(state_->space());
    if (!tflmQuantity_ || key != tflmQuantityKey_) {
        tflmQuantity_ = sramQuantity(state_->space(), runtime);
        tflmQuantityKey_ = key;
    }
    return tflmQuantity_;
}

SramRuntime SearchLimitsForm::sramRuntime() const { return static_cast<SramRuntime>(sramRuntime_->currentData().toInt()); }

void SearchLimitsForm::setSramRuntime(SramRuntime runtime)
{
    if (runtime == sramRuntime()) return;
    const bool was = restoring_;
    restoring_ = true;
    sramRuntime_->setCurrentIndex(sramRuntime_->findData(int(runtime)));   // onSramRuntimeChanged
    restoring_ = was;
}

void SearchLimitsForm::onSramRuntimeChanged()
{
    const SramRuntime runtime = sramRuntime();
    sramRow_->quantity = sramQuantityFor(runtime);
    sramRow_->on->setText(sramLabel(runtime));
    sramRow_->on->setToolTip(QStringLiteral("<p>%1 (limit key %2)</p>")
                                 .arg(QString::fromLatin1(runtime == SramRuntime::Tflm ? kTflmSram : kTinyEngineSram).toHtmlEscaped(),
                                      QString::fromStdString(sramRow_->quantity->key)));
    sramRow_->spin->setToolTip(QStringLiteral("Upper limit on %1: every subnet the search returns stays at or below it")
                                   .arg(QString::fromStdString(sramRow_->quantity->label)));
    syncRange(*sramRow_);   // the same KB, the slider over this runtime's range in the space
}

void SearchLimitsForm::applyWorkspaceLimits()
{
    // Limits of one space rarely mean anything in another (VWW's 250 KB is more than the whole
    // Fashion-MNIST space needs): a workspace brings its own starting limits.
    for (const auto& [key, value] : state_->workspace().search_limits) setLimit(key, value, true);
}

void SearchLimitsForm::setLimit(const std::string& key, double value, bool enabled)
{
    if (sramRow_ && (key == "KBPeakMemory" || key == kTflmArenaKey))
        setSramRuntime(key == kTflmArenaKey ? SramRuntime::Tflm : SramRuntime::TinyEngine);
    for (auto& r : limits_) {
        if (r->quantity->key != key) continue;
        restoring_ = true;
        r->spin->setValue(value);
        r->on->setChecked(enabled);
        r->spin->setEnabled(enabled);
        r->slider->setEnabled(enabled);
        restoring_ = false;
        return;
    }
    throw InputError("unknown constraint '" + key + "'");
}

Constraints SearchLimitsForm::constraints() const
{
    Constraints c;
    for (const auto& r : limits_)
        if (r->on->isChecked()) c.set(r->quantity, r->spin->value());
    if (trainBox_->isChecked() && trainer() == Trainer::TinyEngine) {
        // Last, like the memory-only limit; the budget is part of the limit (it chooses the scheme).
        const std::string pattern = trainPattern_->text().trimmed().toStdString();
        const BoardProfile& board = boards_.at(static_cast<std::size_t>(board_->currentIndex()));
        const double kb = trainBudget_->value();
        const std::string key = state_->space().name + '\n' + pattern + '\n' + board.toJson().dump() + '\n' + QString::number(kb, 'g', 17).toStdString();
        if (!engineLimit_ || key != engineLimitKey_) {
            engineLimit_ = std::make_shared<TinyEngineTrainingLimit>(state_->space(), board, pattern, kb);   // InputError on a bad pattern
            engineLimitKey_ = key;
        }
        c.set(engineLimit_->quantity(), kb);
    } else if (trainBox_->isChecked()) {
        // After the cheap limits, so they reject a draw before its training memory is priced.
        const std::string pattern = trainPattern_->text().toStdString();
        const std::string key = state_->space().name + '\n' + pattern;
        if (!trainLimit_ || key != trainLimitKey_) {
            trainLimit_ = std::make_shared<TrainingMemoryLimit>(state_->space(), pattern);   // InputError on a bad pattern
            trainLimitKey_ = key;
        }
        c.set(trainLimit_->quantity(), trainBudget_->value());
    }
    return c;
}

}  // namespace tinyscope::ui
