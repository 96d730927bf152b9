#pragma once
// GUI entry point: `tinyscope [gui]`. `tinyscope gui --screenshot DIR [options]` runs the screenshot
// tool of the build tree (tests/screenshots, tinyscope-screenshots) with those arguments.
namespace tinyscope::ui {

int runGui(int argc, char** argv);

// After the event loop ends: returns `exitCode` at once when no background job is left, and
// otherwise gives the jobs `graceMs` to finish, then ends the process with `exitCode` (settings
// synced, output flushed) instead of waiting for them (issue 19: quitting during a Graphviz layout,
// which cannot be interrupted, kept the process alive ~160 s). Every file the workbench writes is
// written atomically, so a job cut off this way leaves no partial file.
int finishGui(int exitCode, int graceMs = 2000);

}  // namespace tinyscope::ui
