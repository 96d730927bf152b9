#pragma once
// GUI entry point: `tinyscope [gui] [--screenshot DIR [--no-measure]]`.
namespace tinyscope::ui {

int runGui(int argc, char** argv);

// Renders every panel offscreen to DIR/<panel>.png (and the design-space min/max/random states).
// Without `measure`, the two screenshots that measure subnets on the shipped supernet
// (predictor-check.png, search-measured.png: about a minute of CPU) are left out. Returns the
// number of images written.
class MainWindow;
int writeScreenshots(MainWindow& window, const char* dir, bool measure = true);

}  // namespace tinyscope::ui
