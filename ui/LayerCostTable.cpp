#include "LayerCostTable.h"

#include "CostTableModel.h"
#include "ScreenFit.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

namespace tinyscope::ui {

LayerCostTable::LayerCostTable(QWidget* parent) : QWidget(parent)
{
    auto* tl = new QVBoxLayout(this);
    tl->setContentsMargins(0, 0, 0, 0);
    convOnly_ = new QCheckBox(QStringLiteral("convolutions and classifier only"));
    convOnly_->setToolTip(QStringLiteral("Hide batch-norm, activation and identity rows"));
    convOnly_->setChecked(true);
    tl->addWidget(convOnly_);
    model_ = new CostTableModel(this);
    table_ = new QTableView;
    table_->setModel(model_);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(20);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    boundNameColumn(table_, CostTableModel::Name, 170);   // shapes and MACs in view on a 1280×720 screen
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tl->addWidget(table_);
    connect(convOnly_, &QCheckBox::toggled, this, [this](bool on) { model_->setReport(report_, on); });
}

void LayerCostTable::showReport(const CostReport& report)
{
    report_ = report;
    model_->setReport(report_, convOnly_->isChecked());
    const int pr = model_->peakRow();
    if (pr >= 0) table_->scrollTo(model_->index(pr, 0), QAbstractItemView::PositionAtCenter);
}

}  // namespace tinyscope::ui
