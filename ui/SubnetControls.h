#pragma once
// The Design-space panel's left column: the workspace picker, then the subnet itself — resolution,
// width, extra depth per stage, kernel and expand ratio per block — and the Min / Max / Max (full) /
// Random picks with the random seed. Edits go to AppState::setSubnet; the controls follow
// AppState (rebuilt on a space change, set on a subnet change).
#include "space/SubnetConfig.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QSpinBox;
class QTableWidget;

namespace tinyscope::ui {

class AppState;
class BoardPicker;
class WorkspacePicker;

class SubnetControls : public QWidget {
    Q_OBJECT
public:
    explicit SubnetControls(AppState* state, QWidget* parent = nullptr);

    void selectMin();
    void selectLabMax();
    void selectFullMax();
    // Draw number n of the seed shown: the same sequence as Python's random.seed(s) then n draws.
    void selectRandom();

private:
    QWidget* pickRow();   // Min / Max / Max (full) / Random, then the seed
    QWidget* depthGroup();
    QTableWidget* blockTable();
    void rebuildForSpace();
    void rebuildDepths();
    void rebuildBlocks();
    void showSubnet();   // the controls show AppState's subnet
    void onEdited();
    SubnetConfig configFromControls() const;
    QComboBox* choiceBox(const std::vector<int>& values, const QString& format);   // edits call onEdited
    int resolution() const;

    AppState* state_;
    bool syncing_ = false;   // the controls are being set from AppState: no edit to report
    WorkspacePicker* picker_;
    BoardPicker* boardPicker_;
    QComboBox* resolutionBox_;
    QComboBox* widthBox_;
    QSpinBox* seedBox_;
    std::vector<QComboBox*> depthBoxes_;
    QWidget* depthRow_;
    QTableWidget* blocks_;   // block, stage, kernel (combo), expand (combo)
    unsigned long long randomDraws_ = 0;
};

}  // namespace tinyscope::ui
