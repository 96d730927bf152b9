#pragma once
// Export to TinyEngine as a dialog: the caller (the Training-inspector panel) sets the model and
// the sparse-update scheme; the dialog takes the output folder, the form (reference/faithful),
// the file stem and a board (ExportOptionsForm), runs quantization + graph + §9 checker off the
// GUI thread (progress, Cancel) and lists the findings (ExportFindingsView) *before* anything is
// written; Write then writes the three files (all or nothing), refusing when "refuse on errors" is
// ticked and the checker found errors.
// After writing, "Verify on an emulated Cortex-M7" runs the written folder through the device
// runner (core/device/DeviceRunner.h) off the GUI thread, with the same progress bar and Cancel,
// and shows the verdict (DeviceVerdictView).
#include "nn/quantize/QuantizationJob.h"

#include <QDialog>

#include <memory>

class QLabel;
class QPushButton;

namespace tinyscope::ui {

class DeviceVerdictView;
class ExportFindingsView;
class ExportOptionsForm;
class JobProgressBar;
class JobRunner;

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit ExportDialog(ExportRequest request, QWidget* parent = nullptr);
    ~ExportDialog() override;

    // The settings (ExportOptionsForm).
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
    QLayout* buildButtons();
    void setRunning(bool running);
    void updateWrite();                  // Write needs a checked plan, an output folder and no job
    void showPlan();
    void invalidate();
    void showError(const QString& text);

    ExportRequest request_;
    ExportOptionsForm* options_;
    QString boardLine_;   // the checked plan's use of the chosen board (empty: none chosen)
    ExportFindingsView* findings_;
    QLabel* status_;
    JobProgressBar* progress_;
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
