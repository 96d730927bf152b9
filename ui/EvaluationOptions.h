#pragma once
// What the evaluator runs on: the supernet checkpoint (typed or browsed), the data (a named set
// such as fashion-mnist:test, or a folder), how many images and how many BN re-calibration images,
// and what measures them (oneDNN fp32, the default; oneDNN bf16 where the CPU has native bf16;
// LibTorch fp32 — the CLI's --engine and --dtype; or the deployed int8 top-1: our PTQ, then the
// int8 plans, as make-accdata --dtype int8).
// It shows the workspace's supernet and data; choosing another checkpoint is reported
// (supernetChosen), the owner decides what it means for the workspace.
#include "nn/measure/EvalEngine.h"

#include <QWidget>

class QComboBox;
class QLineEdit;
class QSpinBox;

namespace tinyscope {
struct Workspace;
}

namespace tinyscope::ui {

class EvaluationOptions : public QWidget {
    Q_OBJECT
public:
    explicit EvaluationOptions(QWidget* parent = nullptr);

    void showWorkspace(const Workspace& w);
    QString data() const;
    int images() const;              // 0: all
    int calibrationImages() const;   // 0: no BN re-calibration (fixed at 0 for a space without calibration images)
    void setImageCounts(int images, int calibrationImages);
    EvalEngine engine() const;
    EvalDtype dtype() const;
    bool int8() const;   // the deployed int8 top-1 (engine() and dtype() then do not apply)
    // Chooses an engine and data type; false (nothing changed) when this CPU cannot run them.
    bool setMeasuredBy(EvalEngine engine, EvalDtype dtype);
    void setMeasuredByInt8();

Q_SIGNALS:
    void supernetChosen(const QString& checkpoint);   // another checkpoint than the workspace's
    void dataChanged();

private:
    QLayout* supernetRow();
    QLayout* dataRow();
    QLayout* countsRow();
    QWidget* measuredByBox();
    void showCalibration(const Workspace& w);   // the BN count follows the workspace's calibration data

    QString shownSupernet_;   // the workspace's, as last shown
    QLineEdit* supernet_;
    QComboBox* data_;
    QSpinBox* images_;
    QSpinBox* calibImages_;
    bool calibFixed_ = false;      // the workspace has no calibration images: the count is 0 and disabled
    int calibBeforeNone_ = 1000;   // the count before such a workspace
    QComboBox* measuredBy_;
};

}  // namespace tinyscope::ui
