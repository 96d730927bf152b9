#include "DesignSpacePanel.h"

#include "AppState.h"
#include "CostTotals.h"
#include "EvaluationBox.h"
#include "LayerCostTable.h"
#include "PeakMemoryChart.h"
#include "SubnetControls.h"
#include "SubnetDiagramView.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QHBoxLayout>
#include <QMimeData>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

namespace tinyscope::ui {

DesignSpacePanel::DesignSpacePanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    auto* scroll = new QScrollArea;
    scroll->setWidget(controlsColumn());
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(320);
    diagram_ = new SubnetDiagramView([this] { return diagramStem(); });
    diagram_->setMinimumWidth(380);
    diagram_->setToolTip(QStringLiteral("Wheel zooms, drag pans, double-click fits; right-click saves the diagram"));
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(diagram_);
    split->addWidget(costColumn());
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 3);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);
    setAcceptDrops(true);

    connect(totals_, &CostTotals::budgetChanged, this, [this](double kb) { chart_->setReport(report_, kb); });
    connect(state_, &AppState::subnetChanged, this, &DesignSpacePanel::refresh);
    refresh();
}

QWidget* DesignSpacePanel::controlsColumn()
{
    auto* column = new QWidget;
    side_ = new QVBoxLayout(column);
    controls_ = new SubnetControls(state_);
    side_->addWidget(controls_, 1);
    evaluation_ = new EvaluationBox(state_);
    side_->addWidget(evaluation_);
    column->setMinimumWidth(300);
    column->setMaximumWidth(380);
    return column;
}

QWidget* DesignSpacePanel::costColumn()
{
    auto* column = new QWidget;
    auto* rl = new QVBoxLayout(column);
    rl->setContentsMargins(0, 0, 0, 0);
    totals_ = new CostTotals;
    rl->addWidget(totals_);
    auto* vsplit = new QSplitter(Qt::Vertical);
    vsplit->addWidget(chartTabs());
    table_ = new LayerCostTable;
    vsplit->addWidget(table_);
    vsplit->setStretchFactor(0, 2);
    vsplit->setStretchFactor(1, 3);
    rl->addWidget(vsplit, 1);
    return column;
}

QTabWidget* DesignSpacePanel::chartTabs()
{
    chart_ = new PeakMemoryChart;
    auto* charts = new QTabWidget;
    charts->addTab(chart_, QStringLiteral("Peak memory"));
    charts->addTab(evaluation_->perClassView(), QStringLiteral("Accuracy per class"));
    charts->setTabEnabled(1, false);
    connect(evaluation_, &EvaluationBox::perClassShown, charts, [charts] {
        charts->setTabEnabled(1, true);
        charts->setCurrentIndex(1);
    });
    return charts;
}

double DesignSpacePanel::budgetKB() const { return totals_->budgetKB(); }

const std::string& DesignSpacePanel::diagramDot() const { return diagram_->dot(); }

void DesignSpacePanel::selectMin() { controls_->selectMin(); }

void DesignSpacePanel::selectLabMax() { controls_->selectLabMax(); }

void DesignSpacePanel::selectFullMax() { controls_->selectFullMax(); }

void DesignSpacePanel::selectRandom() { controls_->selectRandom(); }

void DesignSpacePanel::dragEnterEvent(QDragEnterEvent* e)
{
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void DesignSpacePanel::dropEvent(QDropEvent* e)
{
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) evaluation_->classify(urls.front().toLocalFile());
}

QString DesignSpacePanel::diagramStem() const
{
    const SubnetConfig& c = state_->subnet();
    return QStringLiteral("%1-%2px-w%3").arg(QString::fromStdString(state_->space().name)).arg(c.image_size).arg(c.wid);
}

void DesignSpacePanel::refresh()
{
    report_ = CostModel(state_->space()).report(state_->subnet());
    totals_->showReport(report_);
    const QString failure = diagram_->showSubnet(state_->space(), state_->subnet(), report_);
    if (!failure.isEmpty()) Q_EMIT state_->message(failure);
    table_->showReport(report_);
    chart_->setReport(report_, budgetKB());
}

}  // namespace tinyscope::ui
