#pragma once
// A workspace: a design space together with the supernet, the accuracy predictor and the data
// that belong to it, so that cost, predicted accuracy, search and measured accuracy all speak
// about the same networks (issue 19: the GUI used to cost and search in the VWW space while
// measuring silently on the Fashion-MNIST supernet). The GUI's AppState owns one; switching the
// space switches the set. Qt-free and torch-free: it names files, it does not load them.
#include "space/DesignSpace.h"

#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

// The board a workspace starts with: STM32F746 (320 KB SRAM, 1 MB flash), the MCUNet papers' board.
constexpr const char* kDefaultBoardName = "stm32f746";

// The colour of a task's images: Fashion-MNIST's are grey, Visual Wake Words' colour.
enum class ImageColour { Unknown, Grey, Colour };

struct Workspace {
    std::string name;           // "fashion-mnist", "lab3-vww"; the space's name for another space
    std::string title;          // for pickers and the window title, e.g. "Fashion-MNIST"
    DesignSpace space;
    std::string space_source;   // a preset name or the space file it was read from
    std::string supernet;       // a checkpoint of `space`; "" = none (evaluation is off)
    std::string predictor;      // a predictor file made for `space`; "" = none
    std::string data;           // evaluation data ("fashion-mnist:test"); "" = none
    std::string calib_data;     // BN re-calibration data ("fashion-mnist:holdout"); "" = none
    std::string train_data;     // fine-tuning data (compression, "fashion-mnist:fit"); "" = none
    // What the images of its task look like (grey Fashion-MNIST, colour VWW; Unknown for a space
    // of its own): calibration data of another colour is not its task's (workspace/CalibrationData.h).
    ImageColour image_colour = ImageColour::Unknown;
    // The limits a search starts from in this workspace (constraint key, value; each enabled):
    // Lab 3's 60 M MACs / 250 KB in its VWW space. Empty: keep the current ones.
    std::vector<std::pair<std::string, double>> search_limits;
    // The board its subnets are meant for (a preset of models/boards): every SRAM budget in the GUI
    // starts from its SRAM, and Deploy / Export check against it (issue 47: one board, one place).
    std::string board = kDefaultBoardName;

    bool hasSupernet() const { return !supernet.empty(); }
    // Why subnets of this workspace cannot be evaluated; "" when they can (a supernet and data).
    std::string evaluationBlocker() const;
};

// {"fashion-mnist", "fashion-mnist-te", "lab3-vww"}: the first is the first-start workspace, its space
// defaultSpaceName() (test_design_space checks they agree).
std::vector<std::string> shippedWorkspaceNames();
// A shipped workspace with the artefacts found on this installation (a missing supernet or
// predictor file leaves its field empty). Throws InputError listing the names.
Workspace shippedWorkspace(const std::string& name);
// The workspace of a space: the shipped one whose space has the same name and structure, else a
// bare one (the space alone: cost and search need no more).
Workspace workspaceForSpace(const DesignSpace& space, const std::string& source);
// `w` with `checkpoint` as its supernet. Throws InputError when the checkpoint's card names
// another space (the caller switches to that space's workspace instead: workspaceForCheckpoint).
Workspace withSupernet(Workspace w, const std::string& checkpoint);
// The workspace a checkpoint belongs to: its card's preset space with that checkpoint; `current`
// with it when it has no card (the loader checks every tensor's shape when it is evaluated).
Workspace workspaceForCheckpoint(const std::string& checkpoint, const Workspace& current);

// Where a subnet of `w` is measured, deployed or exported with weights: the workspace's own
// supernet, or, when it has none, the default workspace's supernet reached by transferConfig
// (the same blocks at the resolution of the same rank). Callers label a transferred result as
// such. Throws InputError when neither has a supernet.
struct SupernetTarget {
    std::string supernet;
    DesignSpace space;          // the supernet's space
    bool transferred = false;   // space differs from the workspace's
};
SupernetTarget supernetTarget(const Workspace& w);

}  // namespace tinyscope
