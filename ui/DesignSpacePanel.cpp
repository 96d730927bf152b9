#include "DesignSpacePanel.h"

#include "AppState.h"
#include "CostTotals.h"
#include "EvaluationBox.h"
#include "LayerCostTable.h"
#include "PeakMemoryChart.h"
#include "Presentation.h"
#include "ScreenFit.h"
#include "SubnetCompareView.h"
#include "SubnetControls.h"
#include "SubnetDiagramView.h"
#include "TourActions.h"

#include "nn/measure/EvalEngine.h"
#include "predict/AccuracyOracle.h"
#include "space/ArchSampler.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

namespace tinyscope::ui {

DesignSpacePanel::DesignSpacePanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    QWidget* left = controlsColumn();
    diagram_ = new SubnetDiagramView([this] { return diagramStem(); });
    diagram_->setMinimumWidth(170);   // fitted to its width; with A beside it, each gets half
    diagram_->setToolTip(QStringLiteral("Wheel zooms, drag pans, double-click fits; right-click saves the diagram"));
    // Compare mode: A's diagram beside B's (the current subnet), each under its caption.
    diagramA_ = new SubnetDiagramView([this] { return diagramStem() + QStringLiteral("-A"); });
    diagramA_->setMinimumWidth(170);
    diagramA_->setToolTip(QStringLiteral("The pinned subnet A; wheel zooms, drag pans, right-click saves"));
    auto captioned = [](QLabel* caption, QWidget* view) {
        auto* box = new QWidget;
        auto* v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->addWidget(caption);
        v->addWidget(view, 1);
        return box;
    };
    captionA_ = new QLabel(QStringLiteral("<b>A</b> (pinned)"));
    captionB_ = new QLabel(QStringLiteral("<b>B</b> (current: edit it on the left)"));
    captionA_->setWordWrap(true);   // two diagrams side by side stay within 1280 px in presentation mode
    captionB_->setWordWrap(true);
    boxA_ = captioned(captionA_, diagramA_);
    auto* diagrams = new QSplitter(Qt::Horizontal);
    diagrams->addWidget(boxA_);
    diagrams->addWidget(captioned(captionB_, diagram_));
    boxA_->hide();
    captionB_->hide();
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(diagrams);
    split->addWidget(costColumn());
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 3);
    split->setSizes({340, 420, 560});   // proportions when narrow: the diagram is not squeezed to its minimum
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);
    setAcceptDrops(true);

    connect(totals_, &CostTotals::budgetChanged, this, [this](double kb) { chart_->setReport(report_, kb, axisFloorKB_); });
    connect(state_, &AppState::subnetChanged, this, &DesignSpacePanel::refresh);
    auto followBoard = [this] { totals_->setBudgetKB(static_cast<double>(state_->board().sram_bytes) / 1024.0); };
    followBoard();
    connect(state_, &AppState::boardChanged, this, followBoard);
    connect(state_, &AppState::spaceChanged, this, &DesignSpacePanel::unpinCompare);   // A belongs to the old space
    connect(pin_, &QPushButton::clicked, this, [this] { comparing() ? unpinCompare() : pinCompare(); });
    connect(evaluation_, &EvaluationBox::evaluated, this, &DesignSpacePanel::refreshAccuracy);
    connect(evaluation_, &EvaluationBox::perClassAvailable, this, &DesignSpacePanel::refreshAccuracy);
    connect(evaluation_, &EvaluationBox::evaluated, this, [this](bool ok) {
        if (ok && !evaluation_->resultStale())
            compare_->recordMeasured(state_->space().name, state_->subnet(), evaluation_->lastResult().top1);
    });
    refresh();
}

QWidget* DesignSpacePanel::controlsColumn()
{
    // Two parts, each scrolling on its own: the subnet's controls, and the evaluator under them at
    // its own height, so its Evaluate row is in view on a 1280×720 screen, also in presentation
    // mode (issue 47: it was below the fold of one scroll area).
    auto* column = new QWidget;
    side_ = new QVBoxLayout(column);
    side_->setContentsMargins(6, 6, 6, 0);
    controls_ = new SubnetControls(state_);
    side_->addWidget(controls_, 1);
    evaluation_ = new EvaluationBox(state_);
    auto scrolled = [](QWidget* w) {
        auto* s = new QScrollArea;
        s->setWidget(w);
        s->setWidgetResizable(true);
        s->setFrameShape(QFrame::NoFrame);
        fitSideColumn(s);   // never cut at the side, also at presentation mode's font
        return s;
    };
    auto* parts = new QSplitter(Qt::Vertical);
    parts->addWidget(scrolled(column));
    parts->addWidget(scrolled(evaluation_));
    parts->setChildrenCollapsible(false);
    parts->setSizes({55, 45});   // proportions: the block table and the Evaluate row both in view
    // Its width: the wider of the two parts' controls (fitSideColumn), in presentation mode too.
    return parts;
}

QWidget* DesignSpacePanel::costColumn()
{
    auto* column = new QWidget;
    auto* rl = new QVBoxLayout(column);
    rl->setContentsMargins(0, 0, 0, 0);
    totals_ = new CostTotals;
    pin_ = new QPushButton(QStringLiteral("Pin A — compare"));
    pin_->setToolTip(QStringLiteral("Keep the current subnet as A and compare every edit (B) with it: costs, accuracy, "
                                    "both diagrams side by side; the charts' axes stay fixed while comparing"));
    rl->addWidget(totals_);
    totals_->addToBudgetRow(pin_);   // the column keeps its width (1280×720 with the tour dock, or at 150 %)
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
    compare_ = new SubnetCompareView;
    charts->addTab(compare_, QStringLiteral("Compare A/B"));
    charts_ = charts;
    connect(evaluation_, &EvaluationBox::perClassAvailable, charts, [charts](bool available) {
        charts->setTabEnabled(1, available);
        if (!available && charts->currentIndex() == 1) charts->setCurrentIndex(0);
    });
    connect(evaluation_, &EvaluationBox::perClassShown, charts, [charts] {
        charts->setTabEnabled(1, true);
        charts->setCurrentIndex(1);
    });
    return charts;
}

double DesignSpacePanel::budgetKB() const { return totals_->budgetKB(); }

const std::string& DesignSpacePanel::diagramDot() const { return diagram_->dot(); }

void DesignSpacePanel::addTourActions(TourActions& actions)
{
    actions.addAction("subnet", [this](const Json& g, TourRun&) {
        const std::string p = g["preset"].get<std::string>();
        if (p == "min") selectMin();
        else if (p == "lab-max") selectLabMax();
        else if (p == "full-max") selectFullMax();
        else selectRandom();
        return true;
    });
    actions.addTarget("subnet-controls", [this] { return findChild<SubnetControls*>(); });
    actions.addTarget("cost-totals", [this] { return findChild<CostTotals*>(); });
    actions.addTarget("subnet-diagram", [this] { return findChild<SubnetDiagramView*>(); });
    actions.addTarget("layer-costs", [this] { return findChild<LayerCostTable*>(); });
    actions.addTarget("peak-chart", [this] { return findChild<PeakMemoryChart*>(); });
    actions.addTarget("evaluation", [this] { return findChild<EvaluationBox*>(); });
}

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
    chart_->setReport(report_, budgetKB(), axisFloorKB_);
    if (comparing()) compare_->showB(state_->space(), state_->subnet());
    refreshAccuracy();
}

bool DesignSpacePanel::comparing() const { return compare_->pinned(); }

void DesignSpacePanel::setAccuracyOracle(std::shared_ptr<AccuracyOracle> oracle)
{
    oracle_ = oracle;
    compare_->setOracle(std::move(oracle));
    refreshAccuracy();
}

void DesignSpacePanel::refreshAccuracy()
{
    CostTotals::Accuracy a;
    if (!oracle_) {
        a.predictedWhy = QStringLiteral("no predictor");
    } else {
        try {
            a.predicted = oracle_->predict({state_->subnet()}).at(0);
            const std::vector<std::string> caveats = oracle_->caveats(state_->subnet());
            a.predictedWhy = caveats.empty() ? QStringLiteral("predictor") : QStringLiteral("predictor, with a caveat");
            a.caveat = caveats.empty() ? QString() : QString::fromStdString(caveats.front());
        } catch (const std::exception&) {
            a.predictedWhy = QStringLiteral("no predictor of this space");
        }
    }
    if (evaluation_->hasCurrentResult()) {
        const EvalResult& r = evaluation_->lastResult();
        a.measured = r.top1;
        a.measuredBy = QStringLiteral("%1 %2, %3 images")
                           .arg(QString::fromStdString(evalEngineTitle(r.engine)),
                                QString::fromStdString(r.dtype))
                           .arg(r.images);
    }
    totals_->showAccuracy(a);
}

void DesignSpacePanel::pinCompare()
{
    const DesignSpace& space = state_->space();
    compare_->pin(space, state_->subnet());
    diagramA_->showSubnet(space, state_->subnet(), report_);
    // The peak chart's axis stays at the space's largest peak while comparing.
    const ArchSampler sampler(space);
    axisFloorKB_ = CostModel(space).summary(sampler.fullMaxConfig(space.resolutions.back())).peakKB();
    boxA_->show();
    captionB_->show();
    pin_->setText(QStringLiteral("Unpin A"));
    charts_->setCurrentWidget(compare_);
    refresh();
}

void DesignSpacePanel::unpinCompare()
{
    if (!comparing()) return;
    compare_->unpin();
    diagramA_->clearDiagram();
    axisFloorKB_ = 0;
    boxA_->hide();
    captionB_->hide();
    pin_->setText(QStringLiteral("Pin A — compare"));
    charts_->setCurrentIndex(0);
    refresh();
}

}  // namespace tinyscope::ui
