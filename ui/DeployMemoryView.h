#pragma once
// "One memory figure, three engines": a deployed int8 TFLite file's memory on ours, TinyEngine and
// TFLM (compareDeployMemory) against a board — a bar per engine's total against the board's SRAM
// (or why the engine has none), ours flash against its flash, and the table of every figure with
// its reason. A view only: the Deploy dialog runs the job.
#include "deploy/DeployMemory.h"
#include "tinyengine/BoardProfile.h"

#include <QGroupBox>

class QLabel;
class QTableWidget;
class QVBoxLayout;

namespace tinyscope::ui {

class CapacityBar;

class DeployMemoryView : public QGroupBox {
    Q_OBJECT
public:
    explicit DeployMemoryView(QWidget* parent = nullptr);

    void showMemory(const DeployMemoryComparison& memory, const BoardProfile& board);
    void clear();   // the table emptied (the view is hidden by its dialog)

    const QTableWidget* table() const { return table_; }
    const CapacityBar* sramBar(const QString& engine) const;   // engine name → its total's bar
    const CapacityBar* flashBar() const { return flash_; }       // int8 weights + int32 biases
    const CapacityBar* fileFlashBar() const { return fileFlash_; }   // the .tflite file

private:
    void showBars(const std::vector<EngineMemoryRow>& rows, const DeployMemoryComparison& memory, const BoardProfile& board);
    void fillTable(const std::vector<EngineMemoryRow>& rows, const BoardProfile& board);

    QLabel* caption_;
    QWidget* bars_;
    QVBoxLayout* barsLayout_;
    CapacityBar* flash_;
    CapacityBar* fileFlash_;
    QTableWidget* table_;
};

}  // namespace tinyscope::ui
