#pragma once
// GUI entry point: `tinyscope [gui] [--screenshot DIR]`.
namespace tinyscope::ui {

int runGui(int argc, char** argv);

// Renders every panel offscreen to DIR/<panel>.png (and the design-space min/max/random states).
// Returns the number of images written.
class MainWindow;
int writeScreenshots(MainWindow& window, const char* dir);

}  // namespace tinyscope::ui
