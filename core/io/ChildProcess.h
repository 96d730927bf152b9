#pragma once
// Running the tools the workbench drives (TinyEngine's code generators, the Cortex-M toolchain,
// QEMU, python3): PATH lookup, a short command with its output captured, and a long job in its own
// process group with a log, a time bound and cancellation. POSIX; Qt-free.
#include "JobControl.h"

#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

// Is `exe` an executable file in one of PATH's folders?
bool onPath(const std::string& exe);

// Runs argv (PATH lookup) with stdout captured into `out` (at most 1 MB kept; stderr discarded);
// returns the exit code, -1 if it could not run. The child is killed if the workbench dies.
int runCapture(const std::vector<std::string>& argv, std::string* out);

// The last non-empty line of `text` (trailing newlines dropped).
std::string lastLine(const std::string& text);
// The rest of the last line of `text` that starts with `prefix` ("" when none does).
std::string lastLineAfter(const std::string& text, const std::string& prefix);

// The Debian package of the first Python module /usr/bin/python3 cannot import (`modules`: module,
// package pairs; "python3" when there is no interpreter), "" when all import. One interpreter checks
// them all; one per module only to name the missing one.
std::string missingPythonPackage(const std::vector<std::pair<std::string, std::string>>& modules);

// A folder made by mkdtemp under $TMPDIR (default /tmp) named `stem`-XXXXXX, removed with everything
// in it when the object goes, unless `keep` is set. Throws InputError when it cannot be made.
class TemporaryFolder {
public:
    explicit TemporaryFolder(const std::string& stem);
    ~TemporaryFolder();
    TemporaryFolder(const TemporaryFolder&) = delete;
    TemporaryFolder& operator=(const TemporaryFolder&) = delete;
    const std::string& path() const { return path_; }
    bool keep = false;

private:
    std::string path_;
};

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
// S s (hang), killed; last output: …"). Nothing of the group outlives the call, nor the workbench:
// killed (kill -9 too), it takes the whole group with it (a supervisor child, ChildProcess.cpp).
// Returns the exit code (128 + signal when killed by a signal).
int runProcessGroup(const ProcessGroupRun& run, const JobControl& job = {});

}  // namespace tinyscope
