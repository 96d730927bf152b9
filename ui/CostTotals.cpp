#include "CostTotals.h"

#include "cost/CostModel.h"
#include "io/Text.h"

#include <QDoubleSpinBox>
#include <QTextDocumentFragment>
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
    // Issue 47: this panel's peak and the Training inspector's inference figure are different
    // quantities; each says what it counts.
    tooltip_ = QStringLiteral(
        "<p><b>MACs</b>: as Lab 3 counts them (thop, with its 4×elements term per BatchNorm).</p>"
        "<p><b>Peak SRAM (lab rule)</b>: Lab 3's <tt>count_peak_activation_size</tt> — the largest per-block term "
        "(a block's input + hidden map, hidden + depthwise output, …; int8, one byte an element). The search's "
        "SRAM limit bounds this figure, and <tt>tinyscope cost</tt> prints it.</p>"
        "<p>The Training inspector's <b>Inference working set</b> is another quantity: the int8 tensors alive at once "
        "in the scheduled forward pass, a depthwise conv in place as TinyEngine runs it (<tt>tinyscope memory</tt>). "
        "It is the base the fine-tuning budget adds extra memory to, and often smaller than this one.</p>"
        "<p><b>Top-1 predicted</b>: the workspace's accuracy predictor (Predictor panel) on this subnet; "
        "<b>measured</b>: the last evaluation of exactly this subnet on the workspace's supernet (Evaluate).</p>"
        "<p><b>Flash</b>: int8 weights + int32 biases after BN folding; a model file adds its graph and quantization "
        "parameters (the Deploy dialog shows the file's size beside it).</p>");
    totals_->setToolTip(tooltip_);
    column->addWidget(totals_);
    budgetRow_ = new QHBoxLayout;
    column->addLayout(budgetRow_);
    budget_ = new QDoubleSpinBox;
    budget_->setToolTip(QStringLiteral("SRAM budget in KB: the dashed line on the peak-memory chart. It starts from the "
                                       "workspace board's SRAM (Board, on the left) and follows it"));
    budget_->setRange(1, 100000);
    budget_->setDecimals(0);
    budget_->setSuffix(QStringLiteral(" KB"));
    budget_->setValue(320);   // STM32F746, the default board; the panel sets the workspace's
    budgetRow_->addWidget(new QLabel(QStringLiteral("SRAM budget")));
    budgetRow_->addWidget(budget_);
    budgetRow_->addStretch(1);
    connect(budget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &CostTotals::budgetChanged);
}

double CostTotals::budgetKB() const { return budget_->value(); }

void CostTotals::setBudgetKB(double kb) { budget_->setValue(kb); }

void CostTotals::addToBudgetRow(QWidget* w) { budgetRow_->insertWidget(budgetRow_->count() - 1, w); }

void CostTotals::showReport(const CostReport& report)
{
    report_ = report;
    hasReport_ = true;
    render();
}

void CostTotals::showAccuracy(const Accuracy& a)
{
    accuracy_ = a;
    render();
}

QString CostTotals::text() const { return QTextDocumentFragment::fromHtml(totals_->text()).toPlainText(); }

void CostTotals::render()
{
    if (!hasReport_) return;
    const CostSummary& sum = report_.summary;
    const Accuracy& a = accuracy_;
    const QString predicted = a.predicted ? QStringLiteral("%1 %").arg(*a.predicted, 0, 'f', 2) : QStringLiteral("—");
    const QString measured = a.measured ? QStringLiteral("%1 %").arg(*a.measured, 0, 'f', 2) : QStringLiteral("—");
    totals_->setText(
        QStringLiteral("<table cellspacing=2>"
                       "<tr><td><b>MACs</b></td><td align=right>%1 M</td><td>&nbsp;(%2 without BN)</td></tr>"
                       "<tr><td><b>Peak SRAM (lab rule)</b></td><td align=right>%3 KB</td><td>&nbsp;at %4</td></tr>"
                       "<tr><td><b>Params</b></td><td align=right>%5</td><td></td></tr>"
                       "<tr><td><b>Flash</b></td><td align=right>%6 KB</td><td>&nbsp;int8 weights + int32 biases</td></tr>"
                       "<tr><td><b>Top-1 predicted</b></td><td align=right>%7</td><td>&nbsp;%8</td></tr>"
                       "<tr><td><b>Top-1 measured</b></td><td align=right>%9</td><td>&nbsp;%10</td></tr>"
                       "</table>")
            .arg(sum.millionMacs(), 0, 'f', 3)
            .arg(QString::number(sum.macs_without_bn / 1e6, 'f', 3))
            .arg(sum.peakKB(), 0, 'f', 1)
            .arg(QString::fromStdString(report_.peak_layer))
            .arg(QString::fromStdString(groupThousands(sum.params)))
            .arg(sum.flashKB(), 0, 'f', 1)
            .arg(predicted, a.predictedWhy.toHtmlEscaped(), measured,
                 a.measured ? a.measuredBy.toHtmlEscaped() : QStringLiteral("Evaluate")));
    totals_->setToolTip(a.caveat.isEmpty() ? tooltip_ : tooltip_ + QStringLiteral("<p><b>Predictor caveat</b>: %1</p>").arg(a.caveat.toHtmlEscaped()));
}

}  // namespace tinyscope::ui
