#include "device/TfliteDeviceRun.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "deploy/TfliteRead.h"
#include "deploy/TflmArena.h"
#include "deploy/TflmRunner.h"
#include "device/DevicePipeline.h"
#include "io/AtomicFile.h"
#include "io/ChildProcess.h"
#include "io/DataPaths.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

namespace tinyscope {

namespace fs = std::filesystem;

const char* deviceEngineName(DeviceEngine e)
{
    switch (e) {
    case DeviceEngine::Tflm: return "tflm";
    case DeviceEngine::TflmReference: return "tflm-reference";
    case DeviceEngine::TinyEngine: return "tinyengine";
    }
    return "tflm";
}

const char* deviceEngineTitle(DeviceEngine e)
{
    switch (e) {
    case DeviceEngine::Tflm: return "TFLM + CMSIS-NN";
    case DeviceEngine::TflmReference: return "TFLM (reference kernels)";
    case DeviceEngine::TinyEngine: return "TinyEngine";
    }
    return "TFLM + CMSIS-NN";
}

DeviceEngine deviceEngineFromName(const std::string& name)
{
    for (DeviceEngine e : {DeviceEngine::Tflm, DeviceEngine::TflmReference, DeviceEngine::TinyEngine})
        if (name == deviceEngineName(e)) return e;
    throw InputError("engine '" + name + "': expected tflm (TFLM + CMSIS-NN), tflm-reference or tinyengine");
}

std::string missingTfliteDevicePackage(DeviceEngine engine)
{
    if (std::string pkg = missingEmulatorPackage(); !pkg.empty()) return pkg;
    if (engine == DeviceEngine::TinyEngine) return missingPythonPackage({{"numpy", "python3-numpy"}, {"flatbuffers", "python3-flatbuffers"}});
    if (!fileExists("/usr/include/gemmlowp/fixedpoint/fixedpoint.h")) return "libgemmlowp-dev";
    return "";
}

namespace {

// The LCG images of docs/DEVICE_RUNNER.md, in the file's byte order: one stream x ← 1664525·x +
// 1013904223 (mod 2³², x₀ = 1), one byte x >> 24 per step, image 0 then image 1 … (the same bytes
// lcgImages feeds a TinyEngine export, whose input is HWC too).
std::vector<std::int8_t> lcgBytes(std::size_t bytes)
{
    std::vector<std::int8_t> out(bytes);
    std::uint32_t x = 1;
    for (std::int8_t& v : out) {
        x = 1664525u * x + 1013904223u;
        v = static_cast<std::int8_t>(x >> 24);
    }
    return out;
}

// The first `count` items of `spec` at the file's resolution, normalised with its metadata and
// quantized with its input scale and zero point, in NHWC.
std::vector<std::int8_t> datasetInputs(const TfliteFile& f, const std::string& spec, int count, const std::string& file)
{
    const std::vector<int>& s = f.input.shape;
    if (s.size() != 4 || s[3] != 3 || s[1] != s[2])
        throw InputError(file + ": input shape is not [1, R, R, 3]: dataset images cannot be fed (use --data synthetic)");
    const int R = s[1];
    const std::unique_ptr<ImageDataset> data = openDataset(spec);
    if (data->size() < static_cast<std::size_t>(count))
        throw InputError(spec + ": " + std::to_string(data->size()) + " images, fewer than the " + std::to_string(count) + " asked for");
    std::vector<std::size_t> items(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < items.size(); ++i) items[i] = i;
    const Batch b = loadBatch(*data, items, R, f.meta.norm);
    if (!b.skipped.empty()) throw InputError(spec + ": item " + b.skipped.front().first + ": " + b.skipped.front().second);
    const std::size_t plane = static_cast<std::size_t>(R) * static_cast<std::size_t>(R);
    std::vector<std::int8_t> out;
    out.reserve(b.size() * plane * 3);
    for (std::size_t k = 0; k < b.size(); ++k)
        for (std::size_t p = 0; p < plane; ++p)
            for (std::size_t c = 0; c < 3; ++c) {
                const double x = b.pixels[(k * 3 + c) * plane + p];
                const double q = std::nearbyint(x / f.input.scale) + f.input.zero_point;
                out.push_back(static_cast<std::int8_t>(std::clamp(q, -128.0, 127.0)));
            }
    return out;
}

// The first index where two runs' outputs differ (image -1 when they agree).
DeviceFirstDifference firstDifference(const std::vector<std::vector<std::int8_t>>& a, const std::vector<std::vector<std::int8_t>>& b)
{
    DeviceFirstDifference d;
    for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k)
        for (std::size_t i = 0; i < std::min(a[k].size(), b[k].size()); ++i)
            if (a[k][i] != b[k][i]) return {static_cast<int>(k), static_cast<int>(i), a[k][i], b[k][i]};
    return d;
}


}  // namespace

TfliteDeviceRunResult runTfliteOnDevice(const TfliteDeviceRunOptions& o, const JobControl& job)
{
    job.report(0, 4, "read");
    if (const std::string pkg = missingTfliteDevicePackage(o.engine); !pkg.empty())
        throw InputError("a tool the emulated device needs is missing: install the Debian package " + pkg);
    if (o.images < 1 || o.images > 1000) throw InputError("images " + std::to_string(o.images) + " outside 1..1000");
    // The workbench side first: a corrupt or foreign file is refused before anything is compiled.
    const TfliteFile f = readTflite(o.tflite);
    std::int64_t inBytes = 1;
    for (int d : f.input.shape) inBytes *= d;
    const std::vector<std::int8_t> inputs = o.data == "synthetic" ? lcgBytes(static_cast<std::size_t>(inBytes) * static_cast<std::size_t>(o.images))
                                                                  : datasetInputs(f, o.data, o.images, o.tflite);
    const Int8Arithmetic arithmetic = o.engine == DeviceEngine::TinyEngine ? Int8Arithmetic::TinyEngine : Int8Arithmetic::Tflite;

    TfliteDeviceRunResult r;
    r.engine = o.engine;
    DeviceWorkDir guard;
    makeDeviceWorkDir(o.keep_dir, guard);
    r.work_dir = guard.dir;
    const std::string inputsPath = guard.dir + "/inputs.bin";
    writeFileAtomic(inputsPath, std::string(reinterpret_cast<const char*>(inputs.data()), inputs.size()));
    std::error_code ec;
    fs::remove(guard.dir + "/summary.json", ec);   // a kept folder never shows an older run's result

    job.report(1, 4, "device");
    DevicePipelineRun run;
    run.args = {"--tflite", fs::absolute(o.tflite).string(), "--engine", deviceEngineName(o.engine)};
    run.env = {"TS_INPUTS=" + inputsPath};
    run.kernel_cache = o.kernel_cache;
    run.timeout_s = o.timeout_s;
    runDevicePipeline(run, guard, job);

    const std::string summaryPath = guard.dir + "/summary.json";
    r.summary_json = readFileBytes(summaryPath, 64u << 20);
    const Json s = parseJson(r.summary_json, summaryPath);
    try {
        r.images = static_cast<int>(summaryInt(s, "images", summaryPath));
        r.arena_bytes = summaryInt(s, "arena_bytes", summaryPath);
        r.static_sram_bytes = summaryInt(s, "static_sram_bytes", summaryPath);
        r.stack_bytes = summaryInt(s, "stack_high_water_inference", summaryPath);
        r.sram_bytes = summaryInt(s, "sram_bytes", summaryPath);
        r.flash_bytes = summaryInt(s, "flash_bytes", summaryPath);
        r.text_bytes = summarySectionBytes(s, ".text");
        r.rodata_bytes = summarySectionBytes(s, ".rodata");
        r.data_bytes = summarySectionBytes(s, ".data");
        r.bss_bytes = summarySectionBytes(s, ".bss");
        r.model_bytes = summarySectionBytes(s, ".tinyscope_model");
        for (const Json& v : s.at("instructions_per_inference")) r.instructions_per_inference.push_back(v.get<std::int64_t>());
        r.codegen_s = s.at("codegen_s").get<double>();
        r.compile_s = s.at("compile_link_s").get<double>();
        r.emulate_s = s.at("emulation_s").get<double>();
        r.runtime_reused = s.at("kernel_archive_reused").get<bool>();
        r.engine_facts = s.value("engine_facts", Json::object());
    } catch (const Json::exception& e) {
        throw InputError(summaryPath + ": " + e.what());
    }
    // The raw outputs file rather than the summary's copy: the bytes the device wrote.
    const std::string raw = readFileBytes(guard.dir + "/run/outputs.bin", 64u << 20);
    std::int64_t outBytes = 1;
    for (int d : f.output.shape) outBytes *= d;
    if (r.images != o.images || static_cast<std::int64_t>(raw.size()) != outBytes * o.images)
        throw InputError(guard.dir + "/run/outputs.bin: " + std::to_string(raw.size()) + " bytes, expected " + std::to_string(outBytes * o.images) +
                         " (" + std::to_string(o.images) + " images × " + std::to_string(outBytes) + " outputs)");
    for (int k = 0; k < o.images; ++k)
        r.device_outputs.emplace_back(raw.begin() + k * outBytes, raw.begin() + (k + 1) * outBytes);

    if (o.engine != DeviceEngine::TinyEngine && o.check_host) {
        job.report(2, 4, "host");
        if (const std::string why = tflmRunMissing(); !why.empty()) {
            r.host_note = why;
        } else {
            const TflmRunReport host = runTflm(o.tflite, inputs, o.images, 0, job);
            r.host_checked = true;
            r.host_arena_bytes = host.arena_used_bytes;
            for (const auto& v : host.outputs) {
                std::vector<std::int8_t> q;
                for (double x : v) q.push_back(static_cast<std::int8_t>(x));
                r.host_outputs.push_back(q);
            }
            r.host_first_difference = firstDifference(r.device_outputs, r.host_outputs);
            r.host_match = r.host_first_difference.image < 0 && r.host_outputs.size() == r.device_outputs.size();
        }
    } else if (o.engine == DeviceEngine::TinyEngine) {
        r.host_note = "TinyEngine has no host build to compare with";
    }

    job.report(3, 4, "compare");
    const auto t0 = std::chrono::steady_clock::now();
    if (o.engine != DeviceEngine::TinyEngine)
        r.predicted_arena_bytes =
            predictTflmArena(f.net, {4, o.engine == DeviceEngine::Tflm ? TflmKernels::CmsisNn : TflmKernels::Reference}).arena_used_bytes;
    r.workbench_outputs = tfliteReferenceOutputs(f, inputs, o.images, arithmetic);
    r.first_difference = firstDifference(r.device_outputs, r.workbench_outputs);
    r.inference_match = r.first_difference.image < 0;
    r.compare_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    job.report(4, 4, "compare");
    return r;
}

}  // namespace tinyscope
