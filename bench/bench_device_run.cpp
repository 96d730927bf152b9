// Device in the loop, speed (issue 17, docs/DEVICE_RUNNER.md): the workbench's export of the 49kb
// MCUNet-5fps case (MIT's int8 weights and scales, written by the project's own export seam) run
// through `runOnDevice` several times with one kernel cache that starts empty:
//  * run 1, cold: TinyEngine's 68 kernel files are compiled into the archive (the baseline);
//  * run 2, warm: the archive built for the same generated genInclude.h is reused
//    (`kernel_archive_reused`), only the generated code and the harness are compiled;
//  * run 3 (and more): warm again, to show the spread.
// Prints codegen, compile + link and emulation seconds and the wall time of each run, the ratios
// cold / warm of compile + link and of the wall time (same run of this program), the instruction
// counts and whether the device's logits equal Int8Forward's (TinyEngine arithmetic).
// Usage: bench_device_run [SHARED/reference/tinyengine] [RUNS]   (RUNS >= 2, default 3)
// Skips (exit 0, "skipped: …") without ../shared/reference/runtimes or a Debian tool.
#include "BenchTiming.h"
#include "device/DeviceRunner.h"
#include "Error.h"
#include "graph/PublishedSchemes.h"
#include "nn/quantize/QuantizationJob.h"
#include "tinyengine/TinyEngineExport.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace tinyscope;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string withCommas(long long v)
{
    std::string s = std::to_string(v < 0 ? -v : v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return v < 0 ? "-" + s : s;
}

struct Run {
    DeviceRunResult result;
    double wall_s = 0;
};

}  // namespace

int main(int argc, char** argv)
{
    const std::string ref = argc > 1 ? argv[1] : "../shared/reference/tinyengine";
    const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
    if (runs < 2) {
        std::fprintf(stderr, "bench_device_run: RUNS must be at least 2 (one cold, one warm)\n");
        return 2;
    }
    tinyscope::bench::printMachine();
    const fs::path runtimes = fs::path(ref).parent_path() / "runtimes" / "tinyengine";
    if (!fs::exists(fs::path(ref) / "full-int8-params.pkl") || !fs::is_directory(runtimes)) {
        std::printf("skipped: %s/full-int8-params.pkl or %s not found: the device benchmark needs ../shared/reference "
                    "(MIT's 49kb files and the runtimes TinyEngine, CMSIS)\n",
                    ref.c_str(), runtimes.string().c_str());
        return 0;
    }
    if (const std::string pkg = missingDevicePackage(); !pkg.empty()) {
        std::printf("skipped: a tool the emulated device needs is missing: install the Debian package %s\n", pkg.c_str());
        return 0;
    }

    try {
        std::string scratchTemplate = (fs::temp_directory_path() / "tinyscope-bench-device-XXXXXX").string();
        if (!::mkdtemp(scratchTemplate.data())) throw InputError("cannot create a temporary folder under " + fs::temp_directory_path().string());
        const fs::path scratch = scratchTemplate;
        struct Cleanup {
            fs::path p;
            ~Cleanup()
            {
                std::error_code ec;
                fs::remove_all(p, ec);
            }
        } cleanup{scratch};

        // The export, through the same seam as `tinyscope export --model mcunet-5fps --params … --scales …
        // --scheme mcunet-5fps/49kb`.
        auto t0 = Clock::now();
        ExportRequest rq;
        rq.model = ModelSource::zooWithParams("mcunet-5fps", ref + "/full-int8-params.pkl", ref + "/scale.json");
        rq.scheme = schemeByName("mcunet-5fps/49kb", nullptr);
        rq.scheme_label = "mcunet-5fps/49kb";
        const ExportPlan plan = planModelExport(rq);
        const std::string exportDir = (scratch / "export").string();
        writeExport(plan, exportDir, /*strict=*/true);
        std::printf("export mcunet-5fps/49kb (reference form): %.2f s, %d ops\n", secondsSince(t0), plan.graph.liveOps());

        // An empty kernel cache of our own: run 1 compiles the kernels whatever the user's cache holds.
        const std::string cache = (scratch / "device-kernels").string();
        fs::create_directories(cache);
        DeviceRunOptions o;
        o.export_dir = exportDir;
        o.synthetic_images = 2;   // as `tinyscope device-run --images 2`: the LCG stream, one step on image 0 with class 3
        o.labels = {3};
        o.kernel_cache = cache;

        std::vector<Run> done;
        for (int i = 0; i < runs; ++i) {
            const auto t = Clock::now();
            Run r;
            r.result = runOnDevice(o);
            r.wall_s = secondsSince(t);
            done.push_back(std::move(r));
            const DeviceRunResult& d = done.back().result;
            std::printf("run %d (%s): codegen %6.2f s   compile+link %6.2f s   emulate %5.2f s   wall %6.2f s   kernel archive %s   logits %s\n", i + 1,
                        i == 0 ? "cold" : "warm", d.codegen_s, d.compile_s, d.emulate_s, r.wall_s, d.kernel_archive_reused ? "reused" : "compiled",
                        d.inference_match ? "equal Int8Forward" : "DIFFER from Int8Forward");
            std::fflush(stdout);
        }

        const DeviceRunResult& cold = done.front().result;
        const DeviceRunResult& warm = done[1].result;
        double warmCompile = 0, warmWall = 0, minCompile = 1e300, maxCompile = 0, minWall = 1e300, maxWall = 0;
        for (std::size_t i = 1; i < done.size(); ++i) {
            warmCompile += done[i].result.compile_s;
            warmWall += done[i].wall_s;
            minCompile = std::min(minCompile, done[i].result.compile_s);
            maxCompile = std::max(maxCompile, done[i].result.compile_s);
            minWall = std::min(minWall, done[i].wall_s);
            maxWall = std::max(maxWall, done[i].wall_s);
        }
        const double n = static_cast<double>(done.size() - 1);
        warmCompile /= n;
        warmWall /= n;
        std::printf("warm runs (%d): compile+link %.2f–%.2f s (mean %.2f), wall %.2f–%.2f s (mean %.2f)\n", runs - 1, minCompile, maxCompile, warmCompile,
                    minWall, maxWall, warmWall);
        std::printf("ratio cold / warm (mean): compile+link %.2fx   wall %.2fx   (kernel archive: run 1 %s, run 2 %s)\n", cold.compile_s / warmCompile,
                    done.front().wall_s / warmWall, cold.kernel_archive_reused ? "reused (cache not empty?)" : "compiled",
                    warm.kernel_archive_reused ? "reused" : "compiled (not reused!)");

        bool sameCounts = true, allMatch = true;
        for (const Run& r : done) {
            sameCounts &= r.result.instructions_per_inference == cold.instructions_per_inference && r.result.instructions_per_step == cold.instructions_per_step &&
                          r.result.device_logits == cold.device_logits;
            allMatch &= r.result.inference_match;
        }
        std::printf("instructions per inference:");
        for (std::int64_t c : cold.instructions_per_inference) std::printf(" %s", withCommas(c).c_str());
        std::printf("   per training step:");
        for (std::int64_t c : cold.instructions_per_step) std::printf(" %s", withCommas(c).c_str());
        std::printf("   (%s in every run)\n", sameCounts ? "identical, logits too," : "NOT identical");
        std::printf("logits equal Int8Forward (TinyEngine arithmetic) on %d images: %s; SRAM %s B, flash %s B\n", cold.images, allMatch ? "yes, every run" : "NO",
                    withCommas(cold.sram_bytes).c_str(), withCommas(cold.flash_bytes).c_str());
        std::printf("%s\n", tinyscope::bench::loadAverage().c_str());
        return allMatch && sameCounts && !cold.kernel_archive_reused && warm.kernel_archive_reused ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_device_run: %s\n", e.what());
        return 2;
    }
}
