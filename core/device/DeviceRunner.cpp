#include "device/DeviceRunner.h"
#include "device/DevicePipeline.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "io/AtomicFile.h"
#include "io/ChildProcess.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "io/Text.h"
#include "tinyengine/BoardFit.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/Int8Forward.h"
#include "tinyengine/TinyEngineTrainingStep.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>


namespace tinyscope {

namespace fs = std::filesystem;

namespace {

struct ExportFiles {
    std::string graph, params, scale;
};

ExportFiles findExportFiles(const std::string& dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError("export folder '" + dir + "' does not exist");
    std::vector<std::string> graphs, pickles, scales;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        auto endsWith = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
        if (endsWith("-graph.json")) graphs.push_back(e.path().string());
        else if (endsWith(".pkl")) pickles.push_back(e.path().string());
        else if (endsWith("scale.json")) scales.push_back(e.path().string());
    }
    auto one = [&](const std::vector<std::string>& v, const char* what) {
        if (v.empty()) throw InputError("no " + std::string(what) + " in '" + dir + "'");
        if (v.size() > 1) throw InputError("more than one " + std::string(what) + " in '" + dir + "'");
        return v.front();
    };
    return {one(graphs, "*-graph.json"), one(pickles, "*.pkl (params pickle)"), one(scales, "scale.json")};
}


// The script's summary.json into `r` (a summary the script did not finish is an InputError naming it).
Json readSummary(const std::string& text, const std::string& summaryPath, DeviceRunResult& r)
{
    const Json s = parseJson(text, summaryPath);
    try {
        r.images = static_cast<int>(summaryInt(s, "images", summaryPath));
        r.steps = static_cast<int>(summaryInt(s, "steps", summaryPath));
        for (const Json& v : s.at("instructions_per_inference")) r.instructions_per_inference.push_back(v.get<std::int64_t>());
        for (const Json& v : s.at("instructions_per_step")) r.instructions_per_step.push_back(v.get<std::int64_t>());
        r.text_bytes = summarySectionBytes(s, ".text");
        r.rodata_bytes = summarySectionBytes(s, ".rodata");
        r.data_bytes = summarySectionBytes(s, ".data");
        r.bss_bytes = summarySectionBytes(s, ".bss");
        r.stack_inference_bytes = summaryInt(s, "stack_high_water_inference", summaryPath);
        r.stack_training_bytes = summaryInt(s, "stack_high_water_training", summaryPath);
        r.sram_bytes = r.data_bytes + r.bss_bytes + std::max(r.stack_inference_bytes, r.stack_training_bytes);
        r.flash_bytes = summaryInt(s, "flash_bytes", summaryPath);
        r.codegen_s = s.at("codegen_s").get<double>();
        r.compile_s = s.at("compile_link_s").get<double>();
        r.emulate_s = s.at("emulation_s").get<double>();
        r.kernel_archive_reused = s.at("kernel_archive_reused").get<bool>();
    } catch (const Json::exception& e) {
        throw InputError(summaryPath + ": " + e.what());
    }
    return s;
}

// The device's parameter table (summary.json "updated_params", the harness's dump order) and its
// dumps before training and after each of the K steps (params_steps.bin), against the same steps on
// the workbench (tinyEngineTrainingStep). Step k starts on the workbench from the device's values
// after step k − 1, so every step is checked on its own and a difference never snowballs. A depthwise
// bias lives on the device as offsetRBias, an accumulator that starts at TinyEngine's fold residual:
// its value is the export's bias + (accumulator − residual).
void trainingCheck(const ImportedGraph& im, const std::vector<std::vector<std::int8_t>>& images, const std::vector<int>& labels,
                   const Json& s, const std::string& work, DeviceRunResult& r, const JobControl& job)
{
    if (!s.contains("updated_params") || !s["updated_params"].is_array() || labels.empty() || r.steps != static_cast<int>(labels.size())) return;
    compareTrainingSteps(im, images, labels, s["updated_params"], readFileBytes(work + "/run/params_before.bin", 256u << 20),
                         readFileBytes(work + "/run/params_steps.bin", 1u << 30), r, job);
}

}  // namespace

void compareTrainingSteps(const ImportedGraph& im, const std::vector<std::vector<std::int8_t>>& images, const std::vector<int>& labels,
                          const Json& updatedParams, const std::string& before, const std::string& dumps, DeviceRunResult& r, const JobControl& job)
{
    if (labels.empty() || images.empty()) throw InputError("no training step to compare");
    if (!im.params) throw InputError(im.source + ": no params to train");
    const std::string headBias = im.network.head().ir_prefix + "_bias";
    struct Entry {
        std::string name, array;
        std::size_t width = 4, offset = 0, count = 0;
        bool accumulator = false;
        std::vector<std::int64_t> residual;
    };
    std::vector<Entry> table;
    std::size_t tableBytes = 0;
    try {
        for (const Json& q : updatedParams) {
            Entry e;
            e.name = q.at("name").get<std::string>();
            e.array = q.at("array").get<std::string>();
            const std::string dtype = q.at("dtype").get<std::string>();
            if (dtype != "int8" && dtype != "int32")
                throw InputError("the device's parameter table: " + e.name + " is " + dtype + " (TinyEngine's training code updates int8 weights and int32 biases)");
            e.width = dtype == "int8" ? 1 : 4;
            const std::size_t bytes = q.at("bytes").get<std::size_t>();
            if (bytes % e.width != 0) throw InputError("the device's parameter table: " + e.name + " has " + std::to_string(bytes) + " bytes, not whole elements");
            e.offset = tableBytes;
            e.count = bytes / e.width;
            e.accumulator = e.array.rfind("offsetRBias", 0) == 0;
            if (e.accumulator) e.residual = tinyEngineBiasFoldResidual(im.graph, *im.params, e.name);
            tableBytes += bytes;
            table.push_back(std::move(e));
        }
    } catch (const Json::exception& e) {
        throw InputError(std::string("the device's parameter table (summary.json updated_params): ") + e.what());
    }
    if (before.size() != tableBytes || dumps.size() != tableBytes * labels.size())
        throw InputError("params_steps.bin: " + std::to_string(dumps.size()) + " bytes (params_before.bin " + std::to_string(before.size()) +
                         "), the table of " + std::to_string(tableBytes) + " bytes × " + std::to_string(labels.size()) + " steps");
    // Element i of entry e in dump `d` (before training: `before`), as the parameter's value.
    auto deviceValue = [&](const std::string& d, std::size_t base, const Entry& e, std::size_t i, std::int64_t exportBias) -> std::int64_t {
        std::int64_t v;
        if (e.width == 1) {
            v = static_cast<std::int8_t>(d[base + e.offset + i]);
        } else {
            std::int32_t w;
            std::memcpy(&w, d.data() + base + e.offset + 4 * i, 4);
            v = w;
        }
        if (!e.accumulator) return v;
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(exportBias) + static_cast<std::uint32_t>(v - e.residual.at(i)));
    };

    r.training_checked = true;
    r.training_match = true;
    auto note = [&](const std::string& what) {
        if (r.training_match) r.training_difference = what;
        r.training_match = false;
    };
    r.params.assign(table.size(), DeviceParamCheck{});
    QuantizedParams params = *im.params;
    std::vector<std::vector<std::int64_t>> exportValues(table.size());   // the step layout of each entry before training
    std::vector<int> channels(table.size(), 0);
    for (std::size_t k = 0; k < labels.size(); ++k) {
        job.check();
        const TrainingStepResult t = tinyEngineTrainingStep(im.graph, params, images[k % images.size()], labels[k]);
        std::vector<bool> seen(t.params.size(), false);
        for (std::size_t e = 0; e < table.size(); ++e) {
            const Entry& en = table[e];
            DeviceParamCheck& c = r.params[e];
            c.name = en.name;
            c.dtype = en.width == 1 ? "int8" : "int32";
            c.elements = static_cast<std::int64_t>(en.count);
            std::size_t idx = 0;
            while (idx < t.params.size() && t.params[idx].name != en.name) ++idx;
            if (idx == t.params.size()) {
                note(en.name + ": the device updates it (" + en.array + "), the graph has no gradient output for it");
                continue;
            }
            seen[idx] = true;
            const ParameterStep& w = t.params[idx];
            if ((en.width == 1) != (w.dtype == DType::Int8) || en.count != w.after.size()) {
                note(en.name + ": the device's " + en.array + " holds " + std::to_string(en.count) + " " + c.dtype + " values, the workbench updates " +
                     std::to_string(w.after.size()) + " " + dtypeName(w.dtype));
                continue;
            }
            if (k == 0) {
                exportValues[e] = w.before;
                channels[e] = w.channels;
                for (std::size_t i = 0; i < en.count; ++i)
                    if (deviceValue(before, 0, en, i, w.before[i]) != w.before[i])
                        note(en.name + "[" + std::to_string(i) + "]: before training the device holds " + std::to_string(deviceValue(before, 0, en, i, w.before[i])) +
                             " (" + en.array + "), the export " + std::to_string(w.before[i]));
            }
            c.wrapped += w.wrapped;
            if (k == 0 && en.name == headBias) {   // the classifier's bias: its change in the first step, side by side
                r.classifier_bias = en.name;
                r.classifier_bias_delta_device.clear();
                r.classifier_bias_delta_predicted.clear();
                for (std::size_t i = 0; i < en.count; ++i) {
                    r.classifier_bias_delta_device.push_back(deviceValue(dumps, 0, en, i, w.before[i]) - w.before[i]);
                    r.classifier_bias_delta_predicted.push_back(w.after[i] - w.before[i]);
                }
            }
            for (std::size_t i = 0; i < en.count; ++i) {
                const std::int64_t dev = deviceValue(dumps, k * tableBytes, en, i, exportValues[e][i]);
                if (dev == w.after[i]) continue;
                if (w.allows(i, dev)) {   // a float32 gradient within the tolerance truncates to the device's value
                    ++c.at_boundary;
                    continue;
                }
                const std::int64_t d = std::llabs(dev - w.after[i]);
                if (c.mismatches++ == 0) {
                    c.first_mismatch = static_cast<std::int64_t>(i);
                    c.first_step = static_cast<int>(k);
                    c.first_device = dev;
                    c.first_workbench = w.after[i];
                    c.first_before = w.before[i];
                }
                c.max_abs_error = std::max(c.max_abs_error, d);
                r.max_param_rel_error = std::max(r.max_param_rel_error, static_cast<double>(d) / std::max<double>(1.0, static_cast<double>(std::llabs(w.after[i]))));
            }
        }
        for (std::size_t i = 0; i < t.params.size(); ++i)
            if (!seen[i]) note(t.params[i].name + ": the graph has its gradient, the device does not update it");
        if (!r.training_match) return;
        // The next step starts from the device's values.
        for (std::size_t e = 0; e < table.size(); ++e) {
            std::vector<std::int64_t> v(table[e].count);
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = deviceValue(dumps, k * tableBytes, table[e], i, exportValues[e][i]);
            setStepLayoutValues(im.graph, params, table[e].name, channels[e], v);
        }
    }
    for (std::size_t e = 0; e < table.size(); ++e) {
        DeviceParamCheck& c = r.params[e];
        const std::size_t last = (labels.size() - 1) * tableBytes;
        for (std::size_t i = 0; i < table[e].count; ++i)
            if (deviceValue(dumps, last, table[e], i, exportValues[e][i]) != exportValues[e][i]) ++c.changed_device;
        if (c.mismatches > 0)
            note(c.name + "[" + std::to_string(c.first_mismatch) + "] after step " + std::to_string(c.first_step + 1) + ": device " + std::to_string(c.first_device) +
                 ", workbench " + std::to_string(c.first_workbench) + " (before the step " + std::to_string(c.first_before) + "; " + std::to_string(c.mismatches) +
                 " element(s) of " + std::to_string(c.elements) + " differ)");
    }
}

std::string missingDevicePackage()
{
    if (std::string pkg = missingEmulatorPackage(); !pkg.empty()) return pkg;
    return missingPythonPackage({{"numpy", "python3-numpy"}, {"matplotlib", "python3-matplotlib"}, {"tqdm", "python3-tqdm"}});
}

std::vector<std::vector<std::int8_t>> lcgImages(int count, int channels, int height, int width)
{
    std::vector<std::vector<std::int8_t>> out(static_cast<std::size_t>(count));
    const std::size_t n = static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
    std::uint32_t x = 1;
    for (auto& img : out) {
        img.assign(n, 0);
        for (std::size_t i = 0; i < n; ++i) {   // device byte i is (h, w, c) of an HWC image
            x = 1664525u * x + 1013904223u;
            const std::size_t c = i % static_cast<std::size_t>(channels), hw = i / static_cast<std::size_t>(channels);
            img[c * static_cast<std::size_t>(height * width) + hw] = static_cast<std::int8_t>(x >> 24);
        }
    }
    return out;
}

DeviceRunResult runOnDevice(const DeviceRunOptions& o, const JobControl& job)
{
    job.report(0, 3, "tools");
    if (const std::string pkg = missingDevicePackage(); !pkg.empty())
        throw InputError("a tool the emulated device needs is missing: install the Debian package " + pkg);
    const ExportFiles files = findExportFiles(o.export_dir);

    // The workbench side first: a graph or params the workbench cannot read fails before any compile.
    const ImportedGraph im = importTinyEngineGraph(files.graph, files.params, files.scale);
    const Int8Forward forward(im.graph, *im.params, o.arithmetic);
    const TrainingGraph& g = im.graph;
    if (g.input < 0) throw InputError(files.graph + ": no 'input' tensor");
    const TensorShape& shape = g.tensor(g.input).shape;
    if (shape.size() != 4 || shape[0] != 1) throw InputError(files.graph + ": input shape is not [1, C, H, W]");
    const int C = static_cast<int>(shape[1]), H = static_cast<int>(shape[2]), W = static_cast<int>(shape[3]);
    const std::size_t inBytes = static_cast<std::size_t>(C) * static_cast<std::size_t>(H) * static_cast<std::size_t>(W);
    std::vector<std::vector<std::int8_t>> images = o.images;
    std::vector<int> labelValues = o.labels;
    if (images.empty() && o.synthetic_images > 0 && !o.data.empty()) {
        if (C != 3 || H != W) throw InputError(files.graph + ": input is not [1, 3, R, R]: dataset images cannot be fed");
        const std::unique_ptr<ImageDataset> data = openDataset(o.data);
        if (data->size() < static_cast<std::size_t>(o.synthetic_images))
            throw InputError(o.data + ": " + std::to_string(data->size()) + " images, fewer than the " + std::to_string(o.synthetic_images) + " asked for");
        std::vector<std::size_t> items(static_cast<std::size_t>(o.synthetic_images));
        for (std::size_t i = 0; i < items.size(); ++i) items[i] = i;
        const Batch b = loadBatch(*data, items, H);
        if (!b.skipped.empty()) throw InputError(o.data + ": item " + b.skipped.front().first + ": " + b.skipped.front().second);
        for (std::size_t i = 0; i < b.size(); ++i) images.push_back(forward.quantizeInput(&b.pixels[i * inBytes]));
        if (labelValues.empty())
            for (int k = 0; k < o.steps; ++k) labelValues.push_back(b.labels[static_cast<std::size_t>(k) % b.size()]);
    } else if (images.empty() && o.synthetic_images > 0) {
        images = lcgImages(o.synthetic_images, C, H, W);
    }
    if (images.empty()) throw InputError("no images to run");
    if (o.steps < 0 || o.steps > 65536) throw InputError("steps " + std::to_string(o.steps) + " outside 0..65536");
    if (labelValues.empty())
        for (int k = 0; k < o.steps; ++k) labelValues.push_back((3 + k) % forward.classes());
    // What the generated code and the harness take from the graph, checked before the compile: the
    // label is one row of the classifier's classes (the harness writes a one-hot of that length).
    if (g.label < 0) throw InputError(files.graph + ": no parameter 'label' (the generated training code reads one)");
    if (const TensorShape& ls = g.tensor(g.label).shape; ls.size() != 2 || ls[0] != 1 || ls[1] != forward.classes())
        throw InputError(files.graph + ": parameter 'label' has shape " + formatList(ls) + ", the classifier's output needs [1, " +
                         std::to_string(forward.classes()) + "]");
    std::string inputs;
    for (std::size_t k = 0; k < images.size(); ++k) {
        const auto& img = images[k];
        if (img.size() != inBytes)
            throw InputError("image " + std::to_string(k) + " has " + std::to_string(img.size()) + " values, the graph's input " +
                             std::to_string(inBytes));
        for (int h = 0; h < H; ++h)
            for (int w = 0; w < W; ++w)
                for (int c = 0; c < C; ++c)
                    inputs.push_back(static_cast<char>(img[(static_cast<std::size_t>(c) * H + h) * W + w]));
    }
    std::string labels;
    for (std::size_t k = 0; k < labelValues.size(); ++k) {
        if (labelValues[k] < 0 || labelValues[k] >= forward.classes())
            throw InputError("label " + std::to_string(k) + " is " + std::to_string(labelValues[k]) + ", outside 0.." +
                             std::to_string(forward.classes() - 1));
        labels.push_back(static_cast<char>(labelValues[k]));
    }

    DeviceRunResult r;
    DeviceWorkDir guard;
    makeDeviceWorkDir(o.keep_dir, guard);
    r.work_dir = guard.dir;
    const std::string inputsPath = guard.dir + "/inputs.bin", labelsPath = guard.dir + "/labels.bin";
    writeFileAtomic(inputsPath, inputs);
    writeFileAtomic(labelsPath, labels);
    std::error_code ec;
    fs::remove(guard.dir + "/summary.json", ec);   // a kept folder never shows an older run's result

    job.report(1, 3, "device");
    DevicePipelineRun run;
    run.args = {fs::absolute(o.export_dir).string()};
    run.env = {"TS_INPUTS=" + inputsPath, "TS_LABELS=" + labelsPath};
    run.kernel_cache = o.kernel_cache;
    run.timeout_s = o.timeout_s;
    runDevicePipeline(run, guard, job);

    // The summary.
    const std::string summaryPath = guard.dir + "/summary.json";
    r.summary_json = readFileBytes(summaryPath, 64u << 20);
    const Json summary = readSummary(r.summary_json, summaryPath, r);
    r.classes = forward.classes();
    const BoardUse use = boardUse(im);
    r.ledger_sram_bytes = use.sram_bytes;
    r.params_flash_bytes = use.flash_bytes;
    // The raw logits file rather than the summary's copy: the bytes the device wrote.
    const std::string logits = readFileBytes(guard.dir + "/run/logits.bin", 64u << 20);
    const std::size_t K = static_cast<std::size_t>(r.classes);
    if (r.images != static_cast<int>(images.size()) || logits.size() != images.size() * K)
        throw InputError(guard.dir + "/run/logits.bin: " + std::to_string(logits.size()) + " bytes, expected " +
                         std::to_string(images.size() * K) + " (" + std::to_string(images.size()) + " images × " + std::to_string(K) + " classes)");

    job.report(2, 3, "compare");
    r.inference_match = true;
    for (std::size_t k = 0; k < images.size(); ++k) {
        job.check();
        std::vector<std::int8_t> dev(K);
        for (std::size_t i = 0; i < K; ++i) dev[i] = static_cast<std::int8_t>(logits[k * K + i]);
        const std::vector<std::int8_t> ours = forward.run(images[k]);
        for (std::size_t i = 0; i < K && r.inference_match; ++i)
            if (dev[i] != ours[i]) {
                r.inference_match = false;
                r.first_difference = {static_cast<int>(k), static_cast<int>(i), dev[i], ours[i]};
            }
        r.device_logits.push_back(dev);
        r.workbench_logits.push_back(ours);
    }
    trainingCheck(im, images, labelValues, summary, guard.dir, r, job);
    job.report(3, 3, "compare");
    return r;
}

}  // namespace tinyscope
