#pragma once
// The Design-space panel's totals: MACs (and without BN), peak SRAM and the layer that sets it,
// params and flash of the selected subnet, its predicted and measured top-1 side by side, above a
// row with the SRAM budget the peak-memory chart draws (and what the owner adds there): the column
// stays narrow enough for 1280×720 with a dock.
#include "cost/CostModel.h"

#include <QString>
#include <QWidget>

#include <optional>

class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;

namespace tinyscope {
struct CostReport;
}

namespace tinyscope::ui {

class CostTotals : public QWidget {
    Q_OBJECT
public:
    explicit CostTotals(QWidget* parent = nullptr);
    void showReport(const CostReport& report);
    // The selected subnet's top-1: predicted (nullopt: no predictor of this space, with `why`) and
    // measured (nullopt: not evaluated yet; only a result for exactly this subnet is shown).
    struct Accuracy {
        std::optional<double> predicted;
        QString predictedWhy;        // "predictor", "no predictor", …
        QString caveat;              // the predictor's caveat for this subnet (the tooltip)
        std::optional<double> measured;
        QString measuredBy;          // "oneDNN fp32", ...
    };
    void showAccuracy(const Accuracy& a);
    QString text() const;            // the totals as plain text (tests)
    double budgetKB() const;
    void setBudgetKB(double kb);       // the workspace's board sets it (AppState::boardChanged)
    void addToBudgetRow(QWidget* w);   // after the budget, left-aligned

Q_SIGNALS:
    void budgetChanged(double kb);

private:
    void render();

    CostReport report_;
    bool hasReport_ = false;
    Accuracy accuracy_;
    QString tooltip_;   // what each figure counts
    QLabel* totals_;
    QDoubleSpinBox* budget_;
    QHBoxLayout* budgetRow_;
};

}  // namespace tinyscope::ui
