#include "RatioDelegate.h"

#include "ScreenFit.h"
#include "TrainingLayerModel.h"

#include "graph/SchemeEdit.h"
#include "graph/SparseScheme.h"

#include <QComboBox>
#include <QHeaderView>
#include <QStandardItemModel>
#include <QTableView>

namespace tinyscope::ui {

RatioDelegate::RatioDelegate(TrainingLayerModel* model, QObject* parent) : QStyledItemDelegate(parent), model_(model) {}

QWidget* RatioDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex& index) const
{
    auto* box = new QComboBox(parent);
    const Layer& c = model_->network().conv(index.row());
    const std::pair<const char*, double> choices[] = {{"— frozen", 0.0}, {"1/8", 0.125}, {"1/4", 0.25}, {"1/2", 0.5}, {"1 (all)", 1.0}};
    for (const auto& [text, r] : choices) {
        const int k = r > 0 ? updatedChannels(c, r) : 0;
        box->addItem(r > 0 ? QStringLiteral("%1  (%2/%3)").arg(QString::fromUtf8(text)).arg(k).arg(c.cin) : QString::fromUtf8(text), r);
        if (!ratioSelectsChannels(c, r)) {
            auto* m = qobject_cast<QStandardItemModel*>(box->model());
            if (m) m->item(box->count() - 1)->setEnabled(false);
        }
    }
    connect(box, &QComboBox::activated, this, [this, box] {
        auto* self = const_cast<RatioDelegate*>(this);
        Q_EMIT self->commitData(box);
        Q_EMIT self->closeEditor(box);
    });
    return box;
}

void RatioDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const
{
    auto* box = static_cast<QComboBox*>(editor);
    box->setCurrentIndex(box->findData(index.data(TrainingLayerModel::RatioRole).toDouble()));
    box->showPopup();
}

void RatioDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const
{
    model->setData(index, static_cast<QComboBox*>(editor)->currentData(), TrainingLayerModel::RatioRole);
}

QTableView* trainingLayerTable(TrainingLayerModel* model)
{
    auto* table = new QTableView;
    table->setModel(model);
    table->setItemDelegateForColumn(TrainingLayerModel::Weight, new RatioDelegate(model, table));
    table->setEditTriggers(QAbstractItemView::SelectedClicked | QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setTabKeyNavigation(false);   // Tab leaves the table (issue 19)
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(21);
    table->setAlternatingRowColors(false);
    QHeaderView* h = table->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::ResizeToContents);
    h->setStretchLastSection(true);   // the TinyEngine column takes what is left
    // The columns one edits stay in view on a 1280×720 screen (issue 19): bias, weight and their
    // extra bytes come right after the (bounded, middle-elided) layer name; the shape columns follow.
    for (int c : {TrainingLayerModel::Bias, TrainingLayerModel::Weight, TrainingLayerModel::Extra})
        h->moveSection(h->visualIndex(c), h->visualIndex(TrainingLayerModel::Role));
    boundNameColumn(table, TrainingLayerModel::Layer, 150);
    return table;
}

}  // namespace tinyscope::ui
