#pragma once
// Running the tools the workbench drives (TinyEngine's code generators, the Cortex-M toolchain,
// QEMU, python3): PATH lookup, a short command with its output captured, and a long job in its own
// process group with a log, a time bound and cancellation. POSIX; Qt-free.
#include "JobControl.h"

#include <string>
#include <vector>

namespace tinyscope {

// Is `exe` an executable file in one of PATH's folders?
bool onPath(const std::string& exe);

// Runs argv (PATH lookup) with stdout captured into `out` (at most 1 MB kept; stderr discarded);
// returns the exit code, -1 if it could not run.
int runCapture(const std::vector<std::string>& argv, std::string* out);

// The last non-empty line of `text` (trailing newlines dropped).
std::string lastLine(const std::string& text);

struct ProcessGroupRun {
    std::vector<std::string> argv;          // argv[0] is a path (no PATH lookup)
    std::vector<std::string> extra_env;     // KEY=VALUE, replacing the inherited value of KEY
    std::string log_path;                   // stdout and stderr, truncated first
    std::string cwd;                        // empty: the caller's
    double timeout_s = 1800;
    std::string what = "the pipeline";      // names the job in the hang message
};

// Runs `run` in its own process group, polling every 0.1 s: job.cancel kills the whole group and
// throws CancelledError; passing the timeout kills it and throws InputError ("… did not finish within
// S s (hang), killed; last output: …"). Nothing of the group outlives the call. Returns the exit
// code (128 + signal when killed by a signal).
int runProcessGroup(const ProcessGroupRun& run, const JobControl& job = {});

}  // namespace tinyscope
