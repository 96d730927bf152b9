#pragma once
// The Design-space panel: pick a subnet (resolution, width, depth per stage, kernel/expand per
// block, or min / max / random) and see at once its block diagram, totals, per-layer table and
// per-layer peak-memory chart against the SRAM budget.
#include "cost/CostModel.h"

#include <QWidget>

#include <string>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableView;
class QTableWidget;
class QCheckBox;
class QVBoxLayout;

namespace tinyscope::ui {

class AppState;
class CostTableModel;
class EvaluationBox;
class PeakMemoryChart;
class SvgGraphView;

class DesignSpacePanel : public QWidget {
    Q_OBJECT
public:
    explicit DesignSpacePanel(AppState* state, QWidget* parent = nullptr);

    void selectMin();
    void selectLabMax();
    void selectFullMax();
    void selectRandom();
    const CostReport& report() const { return report_; }
    double budgetKB() const;
    // Extra sections (e.g. evaluation) are added below the controls.
    QVBoxLayout* sideLayout() const { return side_; }
    EvaluationBox* evaluationBox() const { return evaluation_; }
    // DOT text of the block diagram shown (the lab's title, the peak-SRAM block outlined), and the
    // file name it is saved under by default ("mcunet-vww-112px-w1").
    const std::string& diagramDot() const { return diagramDot_; }
    QString diagramStem() const;

protected:
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void rebuildForSpace();
    void syncControls();
    void syncPicker();   // the workspace picker shows the current workspace
    void refresh();
    void onControlsEdited();
    SubnetConfig configFromControls() const;

    AppState* state_;
    bool syncing_ = false;
    CostReport report_;
    std::string diagramDot_;

    QComboBox* spaceBox_;
    QComboBox* resolutionBox_;
    QComboBox* widthBox_;
    QSpinBox* seedBox_;
    std::vector<QComboBox*> depthBoxes_;
    QWidget* depthRow_;
    QTableWidget* blocks_;
    QLabel* totals_;
    QDoubleSpinBox* budget_;
    SvgGraphView* diagram_;
    QTableView* table_;
    CostTableModel* tableModel_;
    QCheckBox* convOnly_;
    PeakMemoryChart* chart_;
    QVBoxLayout* side_;
    EvaluationBox* evaluation_;
    unsigned long long randomDraws_ = 0;
};

}  // namespace tinyscope::ui
