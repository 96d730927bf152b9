#pragma once
// The Design-space panel's totals: MACs (and without BN), peak SRAM and the layer that sets it,
// params and flash of the selected subnet, above a row with the SRAM budget the peak-memory chart
// draws (and what the owner adds there): the column stays narrow enough for 1280×720 with a dock.
#include <QWidget>

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
    double budgetKB() const;
    void addToBudgetRow(QWidget* w);   // after the budget, left-aligned

Q_SIGNALS:
    void budgetChanged(double kb);

private:
    QLabel* totals_;
    QDoubleSpinBox* budget_;
    QHBoxLayout* budgetRow_;
};

}  // namespace tinyscope::ui
