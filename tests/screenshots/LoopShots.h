#pragma once
// The loop of issue 46 in the GUI, as screenshots (tinyscope-screenshots DIR --loop): a search of
// the TinyEngine-trainable Fashion-MNIST workspace under a fine-tuning budget on a board → "Use this
// subnet" → the Training inspector with the winner's scheme → Export, verified on the emulated
// Cortex-M7 → the Fine-tune tab training that subnet and scheme. Not part of the shipped UI library.
#include <QString>

namespace tinyscope::ui {
class MainWindow;
}

namespace tinyscope::screenshots {

// In `window` (shown as on a 1280×720 screen): switches to the fashion-mnist-te workspace, searches
// under MACs ≤ 30 M (peak SRAM off) and TinyEngine on the stm32f746 within 64 KB with the best scheme
// per subnet (population 20, 5 generations; the run kept in a temporary history), then writes
//   DIR/loop-search.png            the Search panel after the run (winner card with its scheme),
//   DIR/loop-inspector.png         the Training inspector after "Use this subnet" (the winner's scheme),
//   DIR/loop-export-verified.png   the Export dialog (reference form, stm32f746, refuse on errors)
//                                  after writing and "Verify on an emulated Cortex-M7" matched,
//   DIR/loop-finetune.png          the Fine-tune tab after 1 epoch (2,000 training, 1,000 test images).
// Fine-tuning runs and export files go to temporary folders. Prints each file and what it shows.
// Stops at the first step that fails, with the reason on stderr (the Export dialog's text when the
// verification did not match). Returns the number of images written: 4 when the loop went through.
int writeLoopSet(ui::MainWindow& window, const QString& dir);

}  // namespace tinyscope::screenshots
