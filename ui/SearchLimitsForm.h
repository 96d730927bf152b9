#pragma once
// The Search panel's limits: one row per built-in quantity (MACs, peak SRAM, params, flash) with a
// check box, a spin box and a slider spanning what the space can reach, and the fine-tuning
// memory limit (budget + sparse-update scheme pattern, TrainingMemoryLimit). It knows nothing of
// running searches: it says when the user moved a limit (edited), not when a value was restored.
#include "search/Constraints.h"

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;

namespace tinyscope {
class TrainingMemoryLimit;
}

namespace tinyscope::ui {

class AppState;

class SearchLimitsForm : public QWidget {
    Q_OBJECT
public:
    explicit SearchLimitsForm(AppState* state, QWidget* parent = nullptr);
    ~SearchLimitsForm() override;

    // The limits switched on; InputError when the fine-tuning pattern does not parse.
    Constraints constraints() const;
    void setLimit(const std::string& key, double value, bool enabled);   // InputError: unknown key
    // The fine-tuning memory limit: inference peak + extra memory of `pattern` <= `kb` KB.
    void setTrainingLimit(double kb, const QString& pattern, bool enabled);
    // Shows `c` (a re-opened run's limits); `trainingPattern` is its fine-tuning pattern, if limited.
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

    AppState* state_;
    std::vector<std::unique_ptr<LimitRow>> limits_;
    QGroupBox* trainBox_ = nullptr;   // checkable: the limit is on
    QDoubleSpinBox* trainBudget_ = nullptr;
    QLineEdit* trainPattern_ = nullptr;
    QLabel* trainNote_ = nullptr;     // the pattern's parse error, or what it updates
    // Parsed once per (space, pattern): keeps the per-network memo across live re-runs.
    mutable std::shared_ptr<TrainingMemoryLimit> trainLimit_;
    mutable std::string trainLimitKey_;
    bool restoring_ = false;
};

}  // namespace tinyscope::ui
