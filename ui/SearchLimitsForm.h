#pragma once
// The Search panel's limits: one row per built-in quantity (MACs, peak SRAM, params, flash) with a
// check box, a spin box and a slider spanning what the space can reach — the SRAM row for a runtime
// (search/SramRuntime.h: TinyEngine's peak SRAM, or TFLM's arena on the Cortex-M7) — and the fine-tuning
// memory limit (budget + sparse-update scheme pattern) for one of two trainers: any runtime
// (memory only, TrainingMemoryLimit) or TinyEngine on a board (TinyEngineTrainingLimit: the export
// checker, the board's SRAM and flash, the budget; an empty pattern = the best scheme per subnet).
// It knows nothing of running searches: it says when the user moved a limit (edited), not when a
// value was restored.
#include "search/Constraints.h"
#include "search/SramRuntime.h"
#include "tinyengine/BoardProfile.h"

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;

namespace tinyscope {
class TinyEngineTrainingLimit;
class TrainingMemoryLimit;
}

namespace tinyscope::ui {

class AppState;

class SearchLimitsForm : public QWidget {
    Q_OBJECT
public:
    explicit SearchLimitsForm(AppState* state, QWidget* parent = nullptr);
    ~SearchLimitsForm() override;

    // Who trains on the device, i.e. what the fine-tuning limit checks.
    enum class Trainer {
        AnyRuntime,   // memory only: inference peak + extra memory of the pattern <= budget (KBTrainingMemory)
        TinyEngine,   // what `tinyscope export --strict --board B` checks, and the budget (KBTinyEngineTraining)
    };

    // The limits switched on; InputError when the fine-tuning pattern does not parse (an empty
    // one included, except for TinyEngine, where empty means the best scheme per subnet).
    Constraints constraints() const;
    // InputError: unknown key. The SRAM row takes KBPeakMemory (then bounds TinyEngine's figure) or
    // KBTflmArena (TFLM's arena).
    void setLimit(const std::string& key, double value, bool enabled);
    // Which runtime's memory the SRAM limit bounds (the same number of KB; not an edit).
    void setSramRuntime(SramRuntime runtime);
    SramRuntime sramRuntime() const;
    // The fine-tuning memory limit: inference peak + extra memory of `pattern` <= `kb` KB (the
    // trainer stays as it is).
    void setTrainingLimit(double kb, const QString& pattern, bool enabled);
    // The trainer and, for TinyEngine, the board: a preset name or one this form has shown ("" keeps
    // the current board). InputError for an unknown board.
    void setTrainer(Trainer trainer, const QString& board = QString());
    Trainer trainer() const;
    QString boardName() const;     // the board chosen (used with the TinyEngine trainer)
    QStringList boardNames() const;
    // Shows `c` (a re-opened run's limits); `trainingPattern` is its fine-tuning pattern, if limited
    // by KBTrainingMemory. A KBTinyEngineTraining limit brings back the TinyEngine trainer, its board
    // and its pattern (from the quantity's definition; "best" shows as an empty pattern).
    void setConstraints(const Constraints& c, const QString& trainingPattern);
    void syncRanges();             // slider ranges from the current space
    void applyWorkspaceLimits();   // the workspace's starting limits (Workspace::search_limits)

Q_SIGNALS:
    // A limit changed by the user; `fromDrag` while a slider is held.
    void edited(bool fromDrag);

private:
    struct LimitRow;
    QWidget* buildLimits();
    QWidget* buildTrainingLimit();
    void checkTrainingPattern();
    void onEdited(bool fromDrag);
    void onTrainerChanged();
    void onSramRuntimeChanged();   // the SRAM row's quantity, label and range follow the runtime
    void syncRange(LimitRow& row);
    std::shared_ptr<const ConstraintQuantity> sramQuantityFor(SramRuntime runtime) const;
    int addBoard(const BoardProfile& board);   // combo index of `board` (added when new)

    AppState* state_;
    std::vector<std::unique_ptr<LimitRow>> limits_;
    LimitRow* sramRow_ = nullptr;     // KBPeakMemory, or KBTflmArena under TFLM
    QComboBox* sramRuntime_ = nullptr;   // item data: int(SramRuntime)
    // TFLM's arena quantity, once per space: keeps its per-network memo across live re-runs.
    mutable std::shared_ptr<const ConstraintQuantity> tflmQuantity_;
    mutable std::string tflmQuantityKey_;
    QGroupBox* trainBox_ = nullptr;   // checkable: the limit is on
    QDoubleSpinBox* trainBudget_ = nullptr;
    QLineEdit* trainPattern_ = nullptr;
    QComboBox* trainer_ = nullptr;    // item data: int(Trainer)
    QComboBox* board_ = nullptr;      // item i is boards_[i]
    std::vector<BoardProfile> boards_;   // the presets, then boards of re-opened runs that are not
    QLabel* trainNote_ = nullptr;     // the pattern's parse error, or what it updates
    // Parsed once per (space, pattern): keeps the per-network memo across live re-runs.
    mutable std::shared_ptr<TrainingMemoryLimit> trainLimit_;
    mutable std::string trainLimitKey_;
    // Once per (space, pattern, board, budget): the scheme chosen per subnet depends on the budget.
    mutable std::shared_ptr<TinyEngineTrainingLimit> engineLimit_;
    mutable std::string engineLimitKey_;
    bool restoring_ = false;
};

}  // namespace tinyscope::ui
