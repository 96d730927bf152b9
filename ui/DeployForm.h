#pragma once
// The Deploy dialog's settings: the format (int8 TFLite / float ONNX), the calibration data and its
// image counts (int8 ranges, BatchNorm re-calibration), the board and the output file (its
// extension follows the format). It knows nothing of running the deploy: request() says what to run.
#include "nn/quantize/DeployJob.h"

#include <QWidget>

class QComboBox;
class QHBoxLayout;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace tinyscope::ui {

class BoardPicker;

class DeployForm : public QWidget {
    Q_OBJECT
public:
    // `stem` names the default output file (~/tinyscope-deploy/<stem>.tflite). A subnet of `model`
    // has its BatchNorm re-calibrated on images of its space's task (workspace/CalibrationData.h):
    // the Calibration data starts with the space's own and is empty for a space without any (the
    // deploy then says to choose some, or BN images 0 to keep the checkpoint's statistics); a zoo
    // model's BN images are disabled.
    DeployForm(const QString& stem, const ModelSource& model, QWidget* parent = nullptr);

    void setFormat(DeployFormat format);   // the output file's extension follows
    DeployFormat format() const;
    void setCalibrationImages(int n);
    void setCalibrationData(const QString& data);   // a dataset name (fashion-mnist:holdout) or folder; "": the space's own
    QString calibrationData() const;
    void setBnImages(int n);               // 0: keep the checkpoint's BatchNorm statistics
    void setBoard(const QString& name);    // a preset name
    QString boardName() const;
    void setOutputFile(const QString& path);
    QString outputFile() const;
    // The deploy of `model` these settings ask for ("~/" in the output file is the home folder).
    DeployRequest request(const ModelSource& model) const;
    void setLocked(bool locked);           // while a deploy runs

Q_SIGNALS:
    void boardChanged();

private:
    QHBoxLayout* calibrationDataRow();
    QHBoxLayout* bnImagesRow();
    QHBoxLayout* outputFileRow();
    void followFormat();                   // the extension and the calibration images' state

    QString stem_;
    bool bnApplies_;
    QString ownData_;      // the subnet's space's own calibration data ("" none; a zoo model's default)
    QString expected_;     // what its task's images are (calibrationExpectation)
    QString spaceName_;
    bool locked_ = false;
    QComboBox* format_;
    QComboBox* data_;
    QSpinBox* calib_;
    QSpinBox* bn_;
    BoardPicker* board_;
    QLineEdit* out_;
    QPushButton* browse_;
};

}  // namespace tinyscope::ui
