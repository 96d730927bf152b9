#pragma once
// The Design-space panel's per-layer table of the selected subnet (CostTableModel: shapes, MACs,
// params, peak term), convolutions and classifier only unless unticked; a new report scrolls the
// peak block into view.
#include "cost/CostModel.h"

#include <QWidget>

class QCheckBox;
class QTableView;

namespace tinyscope::ui {

class CostTableModel;

class LayerCostTable : public QWidget {
    Q_OBJECT
public:
    explicit LayerCostTable(QWidget* parent = nullptr);
    void showReport(const CostReport& report);

private:
    CostReport report_;   // shown again when the filter changes
    QCheckBox* convOnly_;
    QTableView* table_;
    CostTableModel* model_;
};

}  // namespace tinyscope::ui
