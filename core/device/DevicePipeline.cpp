#include "device/DevicePipeline.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/Text.h"

#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope {

namespace fs = std::filesystem;

namespace {

// The pipeline's own one-line error ("device-run: …"), else its last line.
std::string pipelineMessage(const std::string& log)
{
    if (std::string found = lastLineAfter(log, "device-run: "); !found.empty()) return found;
    const std::string last = lastLine(log);
    return last.empty() ? "(no output)" : last;
}

constexpr const char* kKeepMarker = ".tinyscope-device-run";
constexpr const char* kTemporaryStem = "tinyscope-device";

// Removes temporary work folders of this user whose marker names a process that no longer runs.
void removeStaleWorkDirs()
{
    const char* tmp = std::getenv("TMPDIR");
    const std::string root = tmp && *tmp ? tmp : "/tmp";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(std::string(kTemporaryStem) + "-", 0) != 0) continue;
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) continue;
        std::string owner;
        try {
            owner = readFileBytes(e.path().string() + "/" + kKeepMarker, 64);
        } catch (const InputError&) {
            continue;   // not ours, or still being set up
        }
        char* end = nullptr;
        const long pid = std::strtol(owner.c_str(), &end, 10);
        if (pid <= 0 || end == owner.c_str() || processRunning(pid)) continue;   // unreadable, or its run is still going
        std::error_code rm;
        fs::remove_all(e.path(), rm);
    }
}

}  // namespace

void makeDeviceWorkDir(const std::string& keep, DeviceWorkDir& w)
{
    if (keep.empty()) {
        removeStaleWorkDirs();
        w.temporary.emplace(kTemporaryStem);
        w.dir = w.temporary->path();
        writeNewFile(w.dir + "/" + kKeepMarker, std::to_string(::getpid()));
        return;
    }
    std::error_code ec;
    const bool existed = fs::exists(keep, ec);
    if (existed) {
        if (!fs::is_directory(keep, ec)) throw InputError("--keep " + escapedForMessage(keep) + ": exists and is not a folder");
        const bool empty = fs::is_empty(keep, ec);
        if (!empty && !fs::exists(fs::path(keep) / kKeepMarker, ec))
            throw InputError("--keep " + escapedForMessage(keep) + ": a folder that holds files and was not made by device-run (no " +
                             kKeepMarker + "); give a new or empty folder, nothing in it is replaced");
    }
    fs::create_directories(keep, ec);
    if (ec || !fs::is_directory(keep)) throw InputError("cannot create the keep folder '" + escapedForMessage(keep) + "': " + ec.message());
    w.dir = fs::absolute(keep).string();
    if (!fs::exists(fs::path(w.dir) / kKeepMarker, ec)) writeNewFile(w.dir + "/" + kKeepMarker, "device-run work folder\n");
}


std::string missingEmulatorPackage()
{
    if (!onPath("arm-none-eabi-gcc") || !onPath("arm-none-eabi-g++")) return "gcc-arm-none-eabi";
    if (!onPath("arm-none-eabi-size") || !onPath("arm-none-eabi-nm") || !onPath("arm-none-eabi-ar")) return "binutils-arm-none-eabi";
    if (!onPath("qemu-system-arm")) return "qemu-system-arm";
    if (!onPath("gcc")) return "gcc";
    std::string specs;
    if (runCapture({"arm-none-eabi-gcc", "-print-file-name=rdimon.specs"}, &specs) != 0) return "gcc-arm-none-eabi";
    specs = lastLine(specs);
    if (specs.empty() || specs.find('/') == std::string::npos || ::access(specs.c_str(), R_OK) != 0) return "libnewlib-arm-none-eabi";
    // TFLM's harness is C++: its static objects register their destructors through libstdc++.
    std::string libstdcxx;
    if (runCapture({"arm-none-eabi-g++", "-print-file-name=libstdc++.a"}, &libstdcxx) != 0) return "gcc-arm-none-eabi";
    libstdcxx = lastLine(libstdcxx);
    if (libstdcxx.find('/') == std::string::npos || ::access(libstdcxx.c_str(), R_OK) != 0) return "libstdc++-arm-none-eabi-newlib";
    return "";
}

std::string deviceKernelCache(const std::string& given)
{
    return given.empty() ? userStateDir() + "/device-kernels" : given;
}

void runDevicePipeline(const DevicePipelineRun& p, const DeviceWorkDir& w, const JobControl& job)
{
    const std::string root = dataRoot();
    const std::string script = root + "/resources/device/run_export.sh";
    if (root.empty() || !fileExists(script)) throw InputError("the device pipeline resources/device/run_export.sh was not found (set TINYSCOPE_DATA)");
    const std::string logPath = w.dir + "/pipeline.log";
    ProcessGroupRun run;
    run.argv = {"/bin/bash", script};
    run.argv.insert(run.argv.end(), p.args.begin(), p.args.end());
    run.argv.push_back(w.dir);
    run.extra_env = p.env;
    run.extra_env.push_back("TS_KERNEL_CACHE=" + deviceKernelCache(p.kernel_cache));
    run.extra_env.push_back("TS_QEMU_TIMEOUT=" + std::to_string(static_cast<long long>(p.timeout_s)));
    run.log_path = logPath;
    run.timeout_s = p.timeout_s;
    const int rc = runProcessGroup(run, job);
    if (rc != 0) {
        const std::string log = readFileBytes(logPath, 64u << 20);
        throw InputError(pipelineMessage(log) + (rc == 2 ? "" : " (pipeline exit " + std::to_string(rc) + ")"));
    }
}

std::int64_t summaryInt(const Json& s, const char* key, const std::string& source)
{
    if (!s.contains(key) || !s[key].is_number_integer()) throw InputError(source + ": no integer '" + key + "'");
    return s[key].get<std::int64_t>();
}

std::int64_t summarySectionBytes(const Json& s, const char* section)
{
    const Json& sec = s.at("sections");
    return sec.contains(section) ? sec[section].get<std::int64_t>() : std::int64_t{0};
}

}  // namespace tinyscope
