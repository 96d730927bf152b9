#pragma once
// GUI entry point: `tinyscope [gui] [--screenshot DIR [--no-measure]]`.
namespace tinyscope::ui {

int runGui(int argc, char** argv);

// After the event loop ends: returns `exitCode` at once when no background job is left, and
// otherwise gives the jobs `graceMs` to finish, then ends the process with `exitCode` (settings
// synced, output flushed) instead of waiting for them (issue 19: quitting during a Graphviz layout,
// which cannot be interrupted, kept the process alive ~160 s). Every file the workbench writes is
// written atomically, so a job cut off this way leaves no partial file.
int finishGui(int exitCode, int graceMs = 2000);

// Renders every panel offscreen to DIR/<panel>.png (and the design-space min/max/random states).
// Without `measure`, the two screenshots that measure subnets on the shipped supernet
// (predictor-check.png, search-measured.png: about a minute of CPU) are left out. Returns the
// number of images written.
class MainWindow;
int writeScreenshots(MainWindow& window, const char* dir, bool measure = true);

}  // namespace tinyscope::ui
