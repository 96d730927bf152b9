#pragma once
// Export to TinyEngine as a dialog: the caller (the Training-inspector panel) sets the model and
// the sparse-update scheme; the dialog takes the output folder, the form (reference/faithful)
// and the file stem, runs quantization + graph + §9 checker off the GUI thread (progress,
// Cancel) and lists the findings *before* anything is written; Write then writes the three
// files (all or nothing), refusing when "refuse on errors" is ticked and the checker found errors.
// After writing, "Verify on an emulated Cortex-M7" runs the written folder through the device
// runner (core/device/DeviceRunner.h) off the GUI thread, with the same progress bar and Cancel,
// and shows the verdict (DeviceVerdictView).
#include "nn/quantize/QuantizationJob.h"
#include "tinyengine/BoardProfile.h"

#include <QDialog>

#include <atomic>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTreeWidget;

namespace tinyscope::ui {

class JobRunner;

class DeviceVerdictView;

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit ExportDialog(ExportRequest request, QWidget* parent = nullptr);
    ~ExportDialog() override;

    void setOutputFolder(const QString& dir);
    void setForm(ExportForm form);
    void setBoard(const QString& name);   // a preset name, or empty for none
    void check();                       // plans the export off the GUI thread (no-op while busy)
    void write();                       // writes the checked plan off the GUI thread
    void verify();                      // runs the written folder on the emulated Cortex-M7 (no-op while busy or before a write)
    bool waitForIdle(int timeoutMs);    // tests and screenshots
    bool busy() const { return running_; }
    bool hasPlan() const { return plan_ != nullptr; }
    const ExportPlan* plan() const { return plan_.get(); }
    int findingCount() const;
    QString statusText() const;
    QStringList writtenFiles() const { return written_; }
    QString progressText() const;       // the progress bar's stage text
    bool canVerify() const;
    const DeviceVerdictView* verdictView() const { return verdict_; }

Q_SIGNALS:
    void checked(bool ok);
    void written(bool ok);
    void verified();

private:
    void setRunning(bool running);
    void showPlan();
    void invalidate();
    void showError(const QString& text);
    static QString stageWords(const QString& stage);   // the device run's stages said for people
    std::optional<BoardProfile> chosenBoard() const;

    ExportRequest request_;
    QLabel* model_;
    QLineEdit* folder_;
    QLineEdit* name_;
    QComboBox* form_;
    QComboBox* board_;
    QString boardLine_;   // the checked plan's use of the chosen board (empty: none chosen)
    QCheckBox* strict_;
    QTreeWidget* findings_;
    QLabel* status_;
    QProgressBar* progress_;
    QPushButton* check_;
    QPushButton* write_;
    QPushButton* verify_;
    DeviceVerdictView* verdict_;
    QPushButton* cancel_;
    std::shared_ptr<const ExportPlan> plan_;
    QStringList written_;
    bool running_ = false;   // the form is locked (setRunning)
    JobRunner* jobs_;
};

}  // namespace tinyscope::ui
