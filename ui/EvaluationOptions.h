#pragma once
// What the evaluator runs on: the supernet checkpoint (typed or browsed), the data (a named set
// such as fashion-mnist:test, or a folder), how many images and how many BN re-calibration images.
// It shows the workspace's supernet and data; choosing another checkpoint is reported
// (supernetChosen), the owner decides what it means for the workspace.
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
    int calibrationImages() const;   // 0: no BN re-calibration
    void setImageCounts(int images, int calibrationImages);

Q_SIGNALS:
    void supernetChosen(const QString& checkpoint);   // another checkpoint than the workspace's
    void dataChanged();

private:
    QLayout* supernetRow();
    QLayout* dataRow();
    QLayout* countsRow();

    QString shownSupernet_;   // the workspace's, as last shown
    QLineEdit* supernet_;
    QComboBox* data_;
    QSpinBox* images_;
    QSpinBox* calibImages_;
};

}  // namespace tinyscope::ui
