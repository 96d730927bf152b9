#include "deploy/TflmRunner.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/ChildProcess.h"
#include "io/DataPaths.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace tinyscope {

namespace fs = std::filesystem;

namespace {

const char* tflmRunOverride()
{
    const char* env = std::getenv("TINYSCOPE_TFLM_RUN");
    return env && *env ? env : nullptr;
}

}  // namespace

std::string tflmRunBinary()
{
    if (const char* env = tflmRunOverride()) return ::access(env, X_OK) == 0 ? env : "";
    // Installed (cmake --install: <prefix>/bin/tinyscope, <prefix>/libexec/tinyscope/tflm_run), else this build's.
    if (const std::string exe = executableDir(); !exe.empty()) {
        const std::string installed = exe + "/../libexec/tinyscope/tflm_run";
        if (::access(installed.c_str(), X_OK) == 0) return fs::weakly_canonical(installed).string();
    }
    return ::access(TINYSCOPE_TFLM_RUN_BUILT, X_OK) == 0 ? TINYSCOPE_TFLM_RUN_BUILT : "";
}

std::string tflmRunMissing()
{
    if (!tflmRunBinary().empty()) return "";
    if (const char* env = tflmRunOverride()) return std::string("TINYSCOPE_TFLM_RUN=") + env + " is not an executable file";
    return "TensorFlow Lite Micro was not built (tflm_run): the build found no ../shared/reference/runtimes/tflite-micro "
           "or no Debian libgemmlowp-dev when it was configured (./setup.sh installs the package; re-run it)";
}

TflmRunReport tflmReportFromJson(const Json& j)
{
    TflmRunReport r;
    r.arena_used_bytes = j.value("arena_used_bytes", std::int64_t{0});
    r.min_arena_bytes = j.value("min_arena_bytes", std::int64_t{0});
    if (j.contains("ops"))
        for (const auto& op : j["ops"]) {
            r.ops.push_back(op.get<std::string>());
            r.pad_ops += r.ops.back() == "PAD" ? 1 : 0;
        }
    if (j.contains("arena_breakdown") && j["arena_breakdown"].is_object()) {
        r.breakdown = j["arena_breakdown"];
        r.head_bytes = r.breakdown.value("head_bytes", std::int64_t{0});
    }
    // The run's own tail (the recording allocator's is a little larger: its bookkeeping objects).
    r.tail_bytes = r.arena_used_bytes - r.head_bytes;
    if (j.contains("memory_plan") && j["memory_plan"].is_object()) {
        const Json& p = j["memory_plan"];
        r.planned_bytes = p.value("planned_bytes", std::int64_t{0});
        r.live_peak_bytes = p.value("live_peak_bytes", std::int64_t{0});
        r.live_peak_op = p.value("live_peak_op", -1);
        r.live_peak_op_type = p.value("live_peak_op_type", std::string());
        for (const auto& b : p.value("live_at_peak", Json::array())) {
            TflmBuffer t;
            t.bytes = b.value("bytes", std::int64_t{0});
            t.first_op = b.value("first_op", 0);
            t.last_op = b.value("last_op", 0);
            t.scratch = !b.contains("tensor");
            t.name = t.scratch ? "scratch of op " + std::to_string(b.value("scratch_of_op", 0)) : b["tensor"].get<std::string>();
            r.live_at_peak.push_back(t);
        }
        for (const auto& v : p.value("live_bytes_per_op", Json::array())) r.live_bytes_per_op.push_back(v.get<std::int64_t>());
    }
    if (j.contains("outputs"))
        for (const auto& image : j["outputs"]) r.outputs.push_back(image.get<std::vector<double>>());
    if (j.contains("invoke_us")) r.invoke_us = j["invoke_us"].get<std::vector<double>>();
    return r;
}

TflmRunReport runTflm(const std::string& tflitePath, const std::vector<std::int8_t>& inputs, int images, std::int64_t arena_bytes,
                      const JobControl& job, double timeout_s)
{
    const std::string binary = tflmRunBinary();
    if (binary.empty()) throw InputError(tflmRunMissing());
    std::error_code ec;
    if (!fs::is_regular_file(tflitePath, ec)) throw InputError("'" + tflitePath + "' is not a file");
    if (images < 1) throw InputError("TensorFlow Lite Micro needs at least one input");

    const TemporaryFolder work("tinyscope-tflm");
    const std::string inputsPath = work.path() + "/inputs.bin";
    {
        std::ofstream out(inputsPath, std::ios::binary);
        out.write(reinterpret_cast<const char*>(inputs.data()), static_cast<std::streamsize>(inputs.size()));
        if (!out) throw InputError("cannot write " + inputsPath);
    }
    ProcessGroupRun run;
    run.argv = {binary, fs::absolute(tflitePath).string(), inputsPath, std::to_string(images)};
    if (arena_bytes > 0) {
        run.argv.push_back("--arena");
        run.argv.push_back(std::to_string(arena_bytes));
    }
    run.log_path = work.path() + "/tflm.log";
    run.timeout_s = timeout_s;
    run.what = "TensorFlow Lite Micro (tflm_run)";
    const int rc = runProcessGroup(run, job);
    const std::string log = readFileBytes(run.log_path, 256u << 20);
    if (rc != 0) {
        const std::string why = lastLineAfter(log, "tflm_run: error: ");
        throw InputError("TensorFlow Lite Micro: " + (why.empty() ? "exit " + std::to_string(rc) + ": " + lastLine(log) : why));
    }
    // The JSON is tflm_run's last line on stdout; TFLM's warnings (stderr) come before it.
    const std::string json = lastLineAfter(log, "{");
    if (json.empty()) throw InputError("TensorFlow Lite Micro printed no result: " + lastLine(log));
    return tflmReportFromJson(parseJson("{" + json, "tflm_run's output"));
}

}  // namespace tinyscope
