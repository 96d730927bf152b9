#pragma once
// The Design-space panel: pick a subnet (resolution, width, depth per stage, kernel/expand per
// block, or min / max / random) and see at once its block diagram, totals, per-layer table and
// per-layer peak-memory chart against the SRAM budget. It assembles the components below and
// costs the subnet once per change (refresh):
//   left   SubnetControls (WorkspacePicker, the subnet's choices, Min/Max/Random), EvaluationBox
//   centre SubnetDiagramView (compare mode: A's beside it)
//   right  CostTotals (+ SRAM budget), Pin A; tabs PeakMemoryChart | per-class accuracy |
//          SubnetCompareView; LayerCostTable
#include "cost/CostModel.h"

#include <QWidget>

#include <memory>
#include <string>

class QLabel;
class QPushButton;
class QTabWidget;
class QVBoxLayout;

namespace tinyscope {
class AccuracyOracle;
}

namespace tinyscope::ui {

class AppState;
class TourActions;
class CostTotals;
class EvaluationBox;
class LayerCostTable;
class PeakMemoryChart;
class SubnetCompareView;
class SubnetControls;
class SubnetDiagramView;

class DesignSpacePanel : public QWidget {
    Q_OBJECT
public:
    explicit DesignSpacePanel(AppState* state, QWidget* parent = nullptr);
    // Guided tours (TourDriver): the "subnet" action and its parts as highlight targets.
    void addTourActions(TourActions& actions);

    void selectMin();
    void selectLabMax();
    void selectFullMax();
    void selectRandom();
    // Compare mode (issue 22): the current subnet pinned as A; every edit is B (SubnetCompareView,
    // A's diagram beside B's, the peak chart's axis fixed). Unpinned when the space changes.
    void pinCompare();
    void unpinCompare();
    bool comparing() const;
    SubnetCompareView* compareView() const { return compare_; }
    SubnetDiagramView* diagramA() const { return diagramA_; }
    // The predictor: the totals' predicted top-1, and compare mode's.
    void setAccuracyOracle(std::shared_ptr<AccuracyOracle> oracle);
    const CostReport& report() const { return report_; }
    double budgetKB() const;
    // Extra sections (e.g. evaluation) are added below the controls.
    QVBoxLayout* sideLayout() const { return side_; }
    EvaluationBox* evaluationBox() const { return evaluation_; }
    // DOT text of the block diagram shown (the lab's title, the peak-SRAM block outlined), and the
    // file name it is saved under by default ("mcunet-vww-112px-w1").
    const std::string& diagramDot() const;
    QString diagramStem() const;

protected:
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    QWidget* controlsColumn();
    QWidget* costColumn();
    QTabWidget* chartTabs();   // peak memory; the per-class accuracy once there is an evaluation
    void refresh();

    AppState* state_;
    CostReport report_;

    SubnetControls* controls_;
    QVBoxLayout* side_;
    EvaluationBox* evaluation_;
    SubnetDiagramView* diagram_;
    CostTotals* totals_;
    PeakMemoryChart* chart_;
    LayerCostTable* table_;
    SubnetCompareView* compare_;
    std::shared_ptr<AccuracyOracle> oracle_;
    void refreshAccuracy();   // the totals' predicted and measured top-1 of the selected subnet
    SubnetDiagramView* diagramA_;
    QWidget* boxA_;
    QLabel* captionA_;
    QLabel* captionB_;
    QPushButton* pin_;
    QTabWidget* charts_;
    double axisFloorKB_ = 0;
};

}  // namespace tinyscope::ui
