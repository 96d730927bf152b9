#pragma once
// The one way a device job reaches the emulated board (docs/DEVICE_RUNNER.md): the pipeline script
// resources/device/run_export.sh, in its own process group, in a work folder that is ours. Both kinds
// of job use it: a TinyEngine training export (DeviceRunner.h) and a .tflite model run for inference
// by TFLM or TinyEngine (TfliteDeviceRun.h). Torch-free, Qt-free.
#include "JobControl.h"
#include "io/ChildProcess.h"
#include "io/JsonFile.h"

#include <cstdint>

#include <optional>
#include <string>
#include <vector>

namespace tinyscope {

// The build folder: `keep` when given, else a temporary folder removed on every way out. The
// pipeline replaces build/, gen/ and run/ inside it, so a kept folder must be ours: one that did not
// exist, was empty, or holds the marker a previous run left there; any other folder is refused, never
// emptied (issue 45). A temporary folder holds the marker too, with this process's id: a run killed
// with SIGKILL leaves its folder, which the next run removes once that process is gone.
struct DeviceWorkDir {
    std::optional<TemporaryFolder> temporary;
    std::string dir;
};
void makeDeviceWorkDir(const std::string& keep, DeviceWorkDir& w);

// The Debian package of the first missing tool every device job needs ("" if all are there):
// arm-none-eabi-gcc (and -g++), its binutils, newlib's rdimon.specs, qemu-system-arm, and the host's gcc
// (the QEMU plugin and the sandbox launcher).
std::string missingEmulatorPackage();

// The user's cache of compiled kernel and runtime archives (<user state>/device-kernels) unless
// `given` names one.
std::string deviceKernelCache(const std::string& given = {});

struct DevicePipelineRun {
    std::vector<std::string> args;          // the script's arguments before the work folder
    std::vector<std::string> env;           // KEY=VALUE besides TS_KERNEL_CACHE and TS_QEMU_TIMEOUT
    std::string kernel_cache;               // "" = deviceKernelCache()
    double timeout_s = 1800;
};

// Runs the script on `w` (its log is w.dir/pipeline.log). The script missing, a failed stage or a hang
// throws InputError with the pipeline's one line; job.cancel kills the group (CancelledError).
void runDevicePipeline(const DevicePipelineRun& run, const DeviceWorkDir& w, const JobControl& job);

// Reading the pipeline's summary.json: an integer (InputError naming `source` and the key when it is
// missing), and the bytes of one ELF section of its "sections" (0 when the program has none).
std::int64_t summaryInt(const Json& summary, const char* key, const std::string& source);
std::int64_t summarySectionBytes(const Json& summary, const char* section);

}  // namespace tinyscope
