// A .tflite on the emulated Cortex-M7, speed (issue 48, docs/BENCHMARKS.md): `runTfliteOnDevice`, the
// seam of `tinyscope device-run --tflite`, on
//  * the largest Fashion-MNIST subnet (the shipped mcunet-fmnist supernet's max, 36×36, squeeze-and-
//    excite blocks), with TFLM + CMSIS-NN: build time cold (a fresh temporary kernel cache, so TFLM's
//    runtime archive and the instruction-counting plugin are compiled) and cached (the second run,
//    same cache), emulation and comparison (Int8Forward) times, each as the pipeline measures it;
//  * instructions per inference (QEMU -icount, input 0, never cycles) of TFLM reference kernels, TFLM +
//    CMSIS-NN and TinyEngine, as ratios against TFLM reference kernels in the same run (= 1.00): on the
//    largest subnet (TinyEngine refuses it: squeeze-and-excite's MUL) and on MCUNet-5fps with MIT's int8
//    params (128×128, no squeeze-and-excite: the model of the MCUNet paper that all three engines run).
// The two .tflite files are written first by `tinyscope deploy` (BN re-calibrated on 200 images, int8
// calibration on 50, as bench/deploy/device_table.sh). The instruction runs use the user's kernel cache
// (~/.local/state/tinyscope/device-kernels): a runtime not in it is compiled there once (~5 min).
// The max has 4.1 MB of int8 weights (a 4.96 MB file): where the device runner's emulated flash cannot
// hold it (the link says "does not fit"), the largest subnet that fits is timed instead, the same blocks
// (ks 7, e 6, d max, 36×36) at width index 1 (fmnist-max-w1).
// Usage: bench_device_tflite [--no-cold] [--images N] [--tinyscope BIN] [--supernet PTH] [--params PKL]
//   --no-cold   skip the cold build (~5 min CPU): both max-subnet runs use the user's cache
//   defaults: 5 images, BIN = build/app/tinyscope beside this program's folder, PTH =
//   models/supernets/mcunet-fmnist.pth, PKL = ../shared/reference/tinyengine/full-int8-params.pkl
//   (run from the repository's root).
// Skips (exit 0, "skipped: …") without ../shared/reference/runtimes or a Debian tool the device needs.
// Exit 1 when a device's outputs differ from Int8Forward's.
#include "BenchTiming.h"
#include "Error.h"
#include "device/TfliteDeviceRun.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
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

std::string shellQuoted(const std::string& s)
{
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

struct Model {
    std::string name, tflite, shape;
    long long macs = 0;
};

// `tinyscope deploy … --format tflite --out DIR/NAME.tflite --json`; throws with deploy's last line.
Model deploy(const std::string& tinyscope, const fs::path& dir, const std::string& name, const std::string& modelArgs)
{
    Model m;
    m.name = name;
    m.tflite = (dir / (name + ".tflite")).string();
    const std::string json = (dir / (name + ".deploy.json")).string(), err = (dir / (name + ".deploy.err")).string();
    const auto t0 = Clock::now();
    const std::string cmd = shellQuoted(tinyscope) + " deploy " + modelArgs + " --format tflite --out " + shellQuoted(m.tflite) + " --json > " + shellQuoted(json) +
                            " 2> " + shellQuoted(err);
    if (std::system(cmd.c_str()) != 0) {
        std::string last = readFileBytes(err, 1u << 20);
        while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
        if (const auto nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
        throw InputError("tinyscope deploy " + name + " failed: " + last);
    }
    const Json j = parseJson(readFileBytes(json, 1u << 20), json);
    const Json& shape = j.at("input").at("shape");
    m.shape = std::to_string(shape.at(1).get<int>()) + "×" + std::to_string(shape.at(2).get<int>());
    m.macs = j.at("cost").at("macs").get<long long>();
    std::printf("deploy %-11s %s, %s MACs: %.1f s\n", name.c_str(), m.shape.c_str(), withCommas(m.macs).c_str(), secondsSince(t0));
    std::fflush(stdout);
    return m;
}

struct Run {
    std::string model, what;
    DeviceEngine engine = DeviceEngine::Tflm;
    std::optional<TfliteDeviceRunResult> result;
    std::string refusal;
    double wall_s = 0;
};

Run runOne(const Model& m, DeviceEngine engine, int images, const std::string& cache, const std::string& what)
{
    Run r;
    r.model = m.name;
    r.engine = engine;
    r.what = what;
    TfliteDeviceRunOptions o;
    o.tflite = m.tflite;
    o.engine = engine;
    o.images = images;
    o.data = "fashion-mnist:test";
    o.kernel_cache = cache;
    const auto t0 = Clock::now();
    try {
        r.result = runTfliteOnDevice(o);
    } catch (const InputError& e) {
        r.refusal = e.what();
    }
    r.wall_s = secondsSince(t0);
    if (r.result) {
        const TfliteDeviceRunResult& d = *r.result;
        std::printf("  %-13s %-24s %-22s runtime %-8s codegen %6.2f s  compile+link %7.2f s  emulate %6.2f s  compare %5.2f s  wall %7.2f s  outputs %s\n",
                    m.name.c_str(), deviceEngineTitle(engine), what.c_str(), d.runtime_reused ? "reused" : "compiled", d.codegen_s, d.compile_s, d.emulate_s,
                    d.compare_s, r.wall_s, d.inference_match ? "equal Int8Forward" : "DIFFER from Int8Forward");
    } else {
        std::printf("  %-13s %-24s %-22s refused: %s (%.1f s)\n", m.name.c_str(), deviceEngineTitle(engine), what.c_str(), r.refusal.c_str(), r.wall_s);
    }
    std::fflush(stdout);
    return r;
}

}  // namespace

int main(int argc, char** argv)
{
    bool cold = true;
    int images = 5;
    std::error_code ec;
    const fs::path self = fs::canonical("/proc/self/exe", ec);
    std::string tinyscope = ec ? std::string("build/app/tinyscope") : (self.parent_path().parent_path() / "app" / "tinyscope").string();
    std::string supernet = "models/supernets/mcunet-fmnist.pth";
    std::string params = "../shared/reference/tinyengine/full-int8-params.pkl";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_device_tflite: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::printf("usage: bench_device_tflite [--no-cold] [--images N] [--tinyscope BIN] [--supernet PTH] [--params PKL]\n"
                        "  run from the repository's root; --no-cold skips the cold build of TFLM's runtime (~5-9 min)\n");
            return 0;
        }
        if (a == "--no-cold") cold = false;
        else if (a == "--images") {
            const std::string v = value();
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < 1 || n > 1000) {
                std::fprintf(stderr, "bench_device_tflite: --images '%s' is not a number in 1..1000\n", v.c_str());
                return 2;
            }
            images = static_cast<int>(n);
        }
        else if (a == "--tinyscope") tinyscope = value();
        else if (a == "--supernet") supernet = value();
        else if (a == "--params") params = value();
        else {
            std::fprintf(stderr, "bench_device_tflite: unknown argument '%s' (usage: bench_device_tflite [--no-cold] [--images N] [--tinyscope BIN] "
                                 "[--supernet PTH] [--params PKL])\n", a.c_str());
            return 2;
        }
    }
    tinyscope::bench::printMachine();
    const fs::path runtimes = fs::path(params).parent_path().parent_path() / "runtimes";
    if (!fs::is_directory(runtimes) || !fs::exists(params)) {
        std::printf("skipped: %s or %s not found: the benchmark needs ../shared/reference (TFLM, CMSIS-NN, TinyEngine, MIT's mcunet-5fps params)\n",
                    runtimes.string().c_str(), params.c_str());
        return 0;
    }
    for (DeviceEngine e : {DeviceEngine::Tflm, DeviceEngine::TflmReference, DeviceEngine::TinyEngine})
        if (const std::string pkg = missingTfliteDevicePackage(e); !pkg.empty()) {
            std::printf("skipped: a tool the emulated device needs (%s) is missing: install the Debian package %s\n", deviceEngineName(e), pkg.c_str());
            return 0;
        }
    if (!fs::exists(tinyscope) || !fs::exists(supernet)) {
        std::fprintf(stderr, "bench_device_tflite: %s or %s not found (build tinyscope; run from the repository's root, or give --tinyscope / --supernet)\n",
                     tinyscope.c_str(), supernet.c_str());
        return 2;
    }

    try {
        std::string scratchTemplate = (fs::temp_directory_path() / "tinyscope-bench-tflite-XXXXXX").string();
        if (!::mkdtemp(scratchTemplate.data())) throw InputError("cannot create a temporary folder under " + fs::temp_directory_path().string());
        const fs::path scratch = scratchTemplate;
        struct Cleanup {
            fs::path p;
            ~Cleanup()
            {
                std::error_code e;
                fs::remove_all(p, e);
            }
        } cleanup{scratch};

        const std::string calib = " --space mcunet-fmnist --bn-images 200 --calib-images 50";
        Model max = deploy(tinyscope, scratch, "fmnist-max", "--supernet " + shellQuoted(supernet) + calib + " --config max");
        const Model fps = deploy(tinyscope, scratch, "mcunet-5fps", "--model mcunet-5fps --params " + shellQuoted(params));

        // 1. Build cold / cached, emulation, comparison: the largest subnet with TFLM + CMSIS-NN. The max has
        // 4.1 MB of int8 weights: on a device runner whose emulated flash cannot hold it (the link says "does
        // not fit"), the largest subnet that fits is timed instead: the same blocks at width index 1.
        std::vector<Run> timed;
        for (int attempt = 0; attempt < 2 && timed.size() < 2; ++attempt) {
            std::printf("\nbuild, emulation and comparison, %s (%s) with TFLM + CMSIS-NN, %d fashion-mnist:test images:\n", max.name.c_str(),
                        max.shape.c_str(), images);
            timed.clear();
            const std::string cache = cold ? (scratch / ("device-kernels-" + std::to_string(attempt))).string() : std::string();
            if (cold) fs::create_directories(cache);
            timed.push_back(runOne(max, DeviceEngine::Tflm, images, cache, cold ? "cold (empty cache)" : "user's cache (1)"));
            if (!timed.back().result && attempt == 0 && timed.back().refusal.find("does not fit") != std::string::npos) {
                const std::string w1 = (scratch / "max-wid1.json").string();
                writeFileAtomic(w1, R"({"d": [2, 2, 2, 2, 2, 2], "e": [6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6], )"
                                    R"("ks": [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7], "image_size": 36, "wid": 1})");
                max = deploy(tinyscope, scratch, "fmnist-max-w1", "--supernet " + shellQuoted(supernet) + calib + " --config " + shellQuoted(w1));
                continue;
            }
            timed.push_back(runOne(max, DeviceEngine::Tflm, images, cache, cold ? "cached (same cache)" : "user's cache (2)"));
        }
        for (const Run& r : timed)
            if (!r.result) throw InputError("TFLM + CMSIS-NN did not run " + max.name + ": " + r.refusal);
        const TfliteDeviceRunResult& a = *timed[0].result;
        const TfliteDeviceRunResult& b = *timed[1].result;
        std::printf("  ratio run 1 / run 2: compile+link %.2fx   wall %.2fx   (runtime archive: run 1 %s, run 2 %s)\n", a.compile_s / b.compile_s,
                    timed[0].wall_s / timed[1].wall_s, a.runtime_reused ? "reused" : "compiled", b.runtime_reused ? "reused" : "compiled (not reused!)");
        std::printf("  wall - (codegen + compile+link + emulate + compare), run 2: %.2f s (reading the file, the inputs, the host TFLM check, the pipeline's tool checks)\n",
                    timed[1].wall_s - b.codegen_s - b.compile_s - b.emulate_s - b.compare_s);

        // 2. Instructions per inference: reference kernels as the baseline of each model.
        std::printf("\ninstructions per inference (input 0; QEMU -icount, not cycles), %d images each, user's kernel cache:\n", images);
        std::vector<Run> runs;
        runs.push_back(runOne(max, DeviceEngine::TflmReference, images, "", ""));
        runs.push_back(timed[1]);
        runs.back().what = "";
        runs.push_back(runOne(max, DeviceEngine::TinyEngine, images, "", ""));
        runs.push_back(runOne(fps, DeviceEngine::TflmReference, images, "", ""));
        runs.push_back(runOne(fps, DeviceEngine::Tflm, images, "", ""));
        runs.push_back(runOne(fps, DeviceEngine::TinyEngine, images, "", ""));

        std::printf("\n%-13s %-8s %-11s %-24s %15s %10s %10s %11s %10s %10s %s\n", "model", "input", "MACs", "engine", "instr/inference", "/ TFLM ref",
                    "TFLM ref /", "instr / MAC", "SRAM", "flash", "outputs");
        bool allMatch = true;
        std::int64_t baseline = 0;
        for (const Run& r : runs) {
            const Model& m = r.model == max.name ? max : fps;
            if (r.engine == DeviceEngine::TflmReference) baseline = r.result && !r.result->instructions_per_inference.empty() ? r.result->instructions_per_inference.front() : 0;
            if (!r.result) {
                std::printf("%-13s %-8s %-11s %-24s refused: %s\n", m.name.c_str(), m.shape.c_str(), withCommas(m.macs).c_str(), deviceEngineTitle(r.engine),
                            r.refusal.c_str());
                continue;
            }
            const TfliteDeviceRunResult& d = *r.result;
            const std::int64_t n = d.instructions_per_inference.empty() ? 0 : d.instructions_per_inference.front();
            allMatch &= d.inference_match;
            char ratio[32] = "-", speedup[32] = "-";
            if (baseline > 0 && n > 0) {
                std::snprintf(ratio, sizeof ratio, "%.3f", static_cast<double>(n) / static_cast<double>(baseline));
                std::snprintf(speedup, sizeof speedup, "%.1fx", static_cast<double>(baseline) / static_cast<double>(n));
            }
            std::printf("%-13s %-8s %-11s %-24s %15s %10s %10s %11.2f %10s %10s %s\n", m.name.c_str(), m.shape.c_str(), withCommas(m.macs).c_str(),
                        deviceEngineTitle(r.engine), withCommas(n).c_str(), ratio, speedup, static_cast<double>(n) / static_cast<double>(m.macs),
                        withCommas(d.sram_bytes).c_str(), withCommas(d.flash_bytes).c_str(),
                        d.inference_match ? (d.engine == DeviceEngine::TinyEngine ? "= Int8Forward (TinyEngine arithmetic)" : "= Int8Forward (TFLite arithmetic)")
                                          : "DIFFER");
        }
        std::printf("%s\n", tinyscope::bench::loadAverage().c_str());
        return allMatch ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_device_tflite: %s\n", e.what());
        return 2;
    }
}
