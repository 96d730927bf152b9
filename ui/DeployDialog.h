#pragma once
// "Deploy…" as a dialog (issue 18, docs/DEPLOY.md "Deploy dialog"): the caller (the Design-space
// panel's evaluator, the Search panel's winner) gives the model; the dialog takes the format (int8
// TFLite / float ONNX), the calibration data and its image counts (int8 ranges, BN re-calibration),
// a board and the output file (DeployForm), and runs deployModel off the GUI thread (progress with the job's stage, Cancel; the file is
// written atomically at the end, so a cancelled or failed run leaves none). For TFLite the same job
// then compares the memory on three engines (compareDeployMemory: ours, TinyEngine, TFLM) and shows
// the table and each engine's total against the board's SRAM, ours flash against its flash (DeployMemoryView).
// After a TFLite deploy, "Run on an emulated Cortex-M7" runs the written file on the device off the
// GUI thread (the same progress bar and Cancel): TFLM + CMSIS-NN, then TinyEngine; the verdict, the
// arena / SRAM / flash against the board and the instructions per inference (TfliteDeviceView).
#include "deploy/DeployMemory.h"
#include "nn/quantize/DeployJob.h"

#include <QDialog>
#include <QElapsedTimer>

#include <optional>

class QLabel;
class QPushButton;
class QTableWidget;

namespace tinyscope::ui {

class CapacityBar;
class DeployForm;
class DeployMemoryView;
class JobProgressBar;
class JobRunner;
class TfliteDeviceView;

class DeployDialog : public QDialog {
    Q_OBJECT
public:
    // `stem` names the default output file (~/tinyscope-deploy/<stem>.tflite); empty: "<space>-subnet"
    // for a subnet, the zoo name for a zoo model.
    explicit DeployDialog(ModelSource model, const QString& stem = QString(), QWidget* parent = nullptr);
    ~DeployDialog() override;

    const ModelSource& model() const { return model_; }
    // The settings (DeployForm): format, calibration data and image counts, board, output file.
    void setFormat(DeployFormat format);   // the output file's extension follows
    DeployFormat format() const;
    void setCalibrationImages(int n);
    void setCalibrationData(const QString& data);   // a dataset name (fashion-mnist:holdout) or folder
    QString calibrationData() const;
    void setBnImages(int n);
    void setBoard(const QString& name);    // a preset name
    QString boardName() const;
    void setOutputFile(const QString& path);
    QString outputFile() const;

    void deploy();                         // starts the job off the GUI thread (no-op while busy)
    // Runs the written .tflite on the emulated Cortex-M7 off the GUI thread: TFLM + CMSIS-NN, then
    // TinyEngine where its generator accepts the model (no-op while busy or without a TFLite deploy).
    void runOnDevice();
    bool canRunOnDevice() const;           // the button is shown and enabled
    bool runOnDeviceShown() const;         // the button is there (after a TFLite deploy)
    QString deviceInputs() const;          // what the device is given ("10 Fashion-MNIST test images")
    const TfliteDeviceView* deviceView() const { return deviceView_; }
    bool deviceViewShown() const;
    void cancel();                         // asks the job to stop
    bool waitForIdle(int timeoutMs);       // tests and screenshots
    bool busy() const { return running_; }

    QString statusText() const;            // the one-line outcome (an error's text)
    QString progressText() const;          // the progress bar's stage text
    QString summaryText() const;           // the written file's summary, plain text
    const std::optional<DeployResult>& result() const { return result_; }
    const std::optional<DeployMemoryComparison>& memory() const { return memory_; }
    const QTableWidget* memoryTable() const;
    bool memoryShown() const;              // the three-engine table and bars are visible
    // The bars of the engines' totals against the board's SRAM (engine name → bar), and ours flash.
    const CapacityBar* sramBar(const QString& engine) const;
    const CapacityBar* flashBar() const;       // int8 weights + int32 biases against the board's flash
    const CapacityBar* fileFlashBar() const;   // the written .tflite file against it

Q_SIGNALS:
    void deployed(bool ok);
    void deviceRunFinished();              // the device verdict is shown (or why there is none)

private:
    QLayout* buildButtons();
    QWidget* buildResults();
    void setRunning(bool running);
    void clearResult();
    void showResult();
    void showMemory();
    void endJob(bool ok, const QString& error);   // unlock the form; cancelled / failed text; deployed()
    void showBoard();                      // the memory table and the device bars against the chosen board

    ModelSource model_;
    DeployForm* form_;
    QPushButton* deploy_;
    QPushButton* runDevice_;
    QPushButton* cancel_;
    JobProgressBar* progress_;
    QLabel* status_;
    QLabel* summary_;
    DeployMemoryView* memoryView_;
    TfliteDeviceView* deviceView_;
    std::string deviceData_;   // the images the device run feeds (set at deploy time)
    enum class Job { None, Deploy, Device };
    Job job_ = Job::None;      // what the runner is doing (its signals end either)
    std::optional<DeployResult> result_;
    std::optional<DeployMemoryComparison> memory_;
    QElapsedTimer clock_;
    bool running_ = false;   // the form is locked (setRunning)
    JobRunner* jobs_;
};

}  // namespace tinyscope::ui
