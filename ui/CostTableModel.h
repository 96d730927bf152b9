#pragma once
// Per-layer rows of a CostReport for a QTableView; rows of the peak block are highlighted.
#include "cost/CostModel.h"

#include <QAbstractTableModel>

namespace tinyscope::ui {

class CostTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Index, Name, Type, Input, Output, Macs, Params, PeakTermKB, ColumnCount };
    explicit CostTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

    void setReport(const CostReport& report, bool convOnly);
    int peakRow() const;   // first row of the peak block, -1 if none

    int rowCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }
    int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : ColumnCount; }
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    struct Row {
        LayerCost layer;
        std::int64_t peakTerm = -1;
        bool peak = false;
    };
    std::vector<Row> rows_;
};

}  // namespace tinyscope::ui
