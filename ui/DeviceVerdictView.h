#pragma once
// The verdict of running an export on the emulated Cortex-M7 (core/device/DeviceRunner.h,
// docs/DEVICE_RUNNER.md "GUI"): whether the device computed what the workbench predicts (the int8
// logits against Int8Forward, the training step against GraphInterpreter and the classifier bias
// rule), the real binary's SRAM and flash as bars against a board, the instruction counts (QEMU
// icount, not cycles) and the pipeline's times. Also shows why there is no verdict: running, a
// missing Debian package, an error of the pipeline, cancelled. A view only: the Export dialog runs
// the job.
#include "device/DeviceRunner.h"
#include "tinyengine/BoardProfile.h"

#include <QGroupBox>

#include <optional>

class QLabel;

namespace tinyscope::ui {

class CapacityBar;

class DeviceVerdictView : public QGroupBox {
    Q_OBJECT
public:
    enum class State { Empty, Running, MissingPackage, Failed, Cancelled, Matches, Differs };

    explicit DeviceVerdictView(QWidget* parent = nullptr);

    void showRunning();
    void showMissingPackage(const QString& package);
    void showError(const QString& message);
    void showCancelled();
    // `inputs` says what the device was given ("2 synthetic LCG images, one training step on image 0, class 3").
    void showResult(const DeviceRunResult& result, const QString& inputs);
    // The board the bars measure against; none chosen: the STM32F746 (the board TinyEngine's flags
    // target), labelled as such. Redraws the bars of the result shown.
    void setBoard(const std::optional<BoardProfile>& board);

    State state() const { return state_; }
    QString verdictText() const;      // the headline, plain text
    QString trainingText() const;     // the training step's line, plain text
    QString detailsText() const;      // instructions and times, plain text
    const CapacityBar* sramBar() const { return sram_; }
    const CapacityBar* flashBar() const { return flash_; }

private:
    void setHeadline(const QString& text, const QString& colour);
    void showBars();

    State state_ = State::Empty;
    std::optional<DeviceRunResult> result_;
    std::optional<BoardProfile> board_;
    QLabel* headline_;
    QLabel* training_;
    QLabel* barsCaption_;
    CapacityBar* sram_;
    CapacityBar* flash_;
    QLabel* details_;
};

}  // namespace tinyscope::ui
