#include "CostTotals.h"

#include "cost/CostModel.h"
#include "io/Text.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace tinyscope::ui {

CostTotals::CostTotals(QWidget* parent) : QWidget(parent)
{
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    totals_ = new QLabel;
    totals_->setTextFormat(Qt::RichText);
    totals_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    column->addWidget(totals_);
    budgetRow_ = new QHBoxLayout;
    column->addLayout(budgetRow_);
    budget_ = new QDoubleSpinBox;
    budget_->setToolTip(QStringLiteral("SRAM budget in KB: the dashed line on the peak-memory chart"));
    budget_->setRange(1, 100000);
    budget_->setDecimals(0);
    budget_->setSuffix(QStringLiteral(" KB"));
    budget_->setValue(256);
    budgetRow_->addWidget(new QLabel(QStringLiteral("SRAM budget")));
    budgetRow_->addWidget(budget_);
    budgetRow_->addStretch(1);
    connect(budget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &CostTotals::budgetChanged);
}

double CostTotals::budgetKB() const { return budget_->value(); }

void CostTotals::addToBudgetRow(QWidget* w) { budgetRow_->insertWidget(budgetRow_->count() - 1, w); }

void CostTotals::showReport(const CostReport& report)
{
    const CostSummary& sum = report.summary;
    totals_->setText(
        QStringLiteral("<table cellspacing=2>"
                       "<tr><td><b>MACs</b></td><td align=right>%1 M</td><td>&nbsp;(%2 without BN)</td></tr>"
                       "<tr><td><b>Peak SRAM</b></td><td align=right>%3 KB</td><td>&nbsp;at %4</td></tr>"
                       "<tr><td><b>Params</b></td><td align=right>%5</td><td></td></tr>"
                       "<tr><td><b>Flash</b></td><td align=right>%6 KB</td><td>&nbsp;int8 weights + int32 biases</td></tr>"
                       "</table>")
            .arg(sum.millionMacs(), 0, 'f', 3)
            .arg(QString::number(sum.macs_without_bn / 1e6, 'f', 3))
            .arg(sum.peakKB(), 0, 'f', 1)
            .arg(QString::fromStdString(report.peak_layer))
            .arg(QString::fromStdString(groupThousands(sum.params)))
            .arg(sum.flashKB(), 0, 'f', 1));
}

}  // namespace tinyscope::ui
