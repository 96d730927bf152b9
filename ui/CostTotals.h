#pragma once
// The Design-space panel's totals: MACs (and without BN), peak SRAM and the layer that sets it,
// params and flash of the selected subnet, beside the SRAM budget the peak-memory chart draws.
#include <QWidget>

class QDoubleSpinBox;
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

Q_SIGNALS:
    void budgetChanged(double kb);

private:
    QLabel* totals_;
    QDoubleSpinBox* budget_;
};

}  // namespace tinyscope::ui
