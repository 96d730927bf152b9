#pragma once
// A deployed int8 .tflite on the emulated Cortex-M7 (core/device/TfliteDeviceRun.h, docs/DEPLOY.md
// "Deploy dialog"), two columns: TFLM + CMSIS-NN, and TinyEngine beside it where its code generator
// accepts the model. Per engine: whether the device's int8 outputs equal the workbench's (Int8Forward
// in that engine's arithmetic; TFLM also against TFLM built for the host) or the first difference;
// the real binary's arena, SRAM and flash as CapacityBars against the board; instructions per
// inference (QEMU icount, never cycles) and the times. An engine that did not run is a line saying
// why (TinyEngine refusing the model, a missing Debian package, a failed build), never a dialog.
// A view only: the Deploy dialog runs the job.
#include "device/TfliteDeviceRun.h"
#include "tinyengine/BoardProfile.h"

#include <QGroupBox>

#include <memory>
#include <optional>
#include <string>
#include <vector>

class QLabel;

namespace tinyscope::ui {

class CapacityBar;

// How one engine's run ended: its result, or why there is none.
struct TfliteEngineRun {
    DeviceEngine engine = DeviceEngine::Tflm;
    std::optional<TfliteDeviceRunResult> result;
    std::string missing_package;   // a Debian package the engine needs
    std::string error;             // the run's one line (InputError): a refusal, a build error, a hang
    bool cancelled = false;
    bool matches() const;          // outputs equal the workbench's (and host TFLM's, when checked)
};

class TfliteDeviceView : public QGroupBox {
    Q_OBJECT
public:
    enum class State { Empty, Running, Refused, Cancelled, Failed, Matches, Differs };
    enum class Figure { Arena, Sram, Flash };

    explicit TfliteDeviceView(QWidget* parent = nullptr);
    ~TfliteDeviceView() override;

    void showRunning(const QString& inputs);
    // The whole run refused before any engine ran (a missing or corrupt file): one line.
    void showRefused(const QString& message);
    void showCancelled();
    // TFLM + CMSIS-NN first, then TinyEngine; `inputs` says what the device was given
    // ("10 Fashion-MNIST test images").
    void showRuns(const std::vector<TfliteEngineRun>& runs, const QString& inputs);
    // The board the bars measure against; redraws the bars of the runs shown.
    void setBoard(const BoardProfile& board);
    void clear();

    State state() const { return state_; }
    const std::vector<TfliteEngineRun>& runs() const { return runs_; }   // the runs shown
    QString verdictText() const;                         // the headline, plain text
    QString engineText(DeviceEngine engine) const;       // an engine column's verdict line ("" when not shown)
    QString instructionsText(DeviceEngine engine) const; // its instructions-per-inference line
    QString captionText() const;                         // what the bars count and whether each engine fits
    // The bar of `figure` in `engine`'s column; nullptr for an engine without a column.
    const CapacityBar* bar(DeviceEngine engine, Figure figure) const;
    bool barsShown(DeviceEngine engine) const;

private:
    struct Column;
    Column* column(DeviceEngine engine) const;
    void setHeadline(const QString& text, const QString& colour);
    void showColumn(Column& c, const TfliteEngineRun& run, const TfliteEngineRun* tflm);
    void showBars();

    State state_ = State::Empty;
    std::vector<TfliteEngineRun> runs_;
    BoardProfile board_;
    QLabel* headline_;
    QLabel* caption_;
    std::vector<std::unique_ptr<Column>> columns_;   // TFLM + CMSIS-NN, TinyEngine
};

}  // namespace tinyscope::ui
