#pragma once
// The Training inspector's weight-ratio cell: a combo of 0, 1/8, 1/4, 1/2, 1 with the channels each
// selects (ratios that select no channel of the conv are disabled); the choice is committed at
// once, so one click-choose is one undo step.
#include <QStyledItemDelegate>

class QTableView;

namespace tinyscope::ui {

class TrainingLayerModel;

class RatioDelegate : public QStyledItemDelegate {
public:
    RatioDelegate(TrainingLayerModel* model, QObject* parent);
    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;

private:
    TrainingLayerModel* model_;
};

// The inspector's per-conv table over `model`, with this delegate on the weight column.
QTableView* trainingLayerTable(TrainingLayerModel* model);

}  // namespace tinyscope::ui
