// tinyscope device-run  (a TinyEngine export on an emulated Cortex-M7, compared with Int8Forward)
#include "cli/Cli.h"
#include "cli/CliArgs.h"

#include "Error.h"
#include "device/DeviceRunner.h"
#include "device/TfliteDeviceRun.h"
#include "tinyengine/BoardProfile.h"
#include "io/JsonFile.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>

namespace tinyscope::cli {

namespace {

// Ctrl-C / kill while the pipeline runs: the pipeline is in its own process group (the terminal's
// SIGINT does not reach it), so the signal only asks the runner to kill that group and return.
std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) { g_interrupted.store(true); }

struct InterruptGuard {
    struct sigaction old_int{}, old_term{}, old_hup{};
    InterruptGuard()
    {
        struct sigaction sa{};
        sa.sa_handler = onInterrupt;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        sigaction(SIGHUP, &sa, &old_hup);
    }
    ~InterruptGuard()
    {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
        sigaction(SIGHUP, &old_hup, nullptr);
    }
};

Json logitsJson(const std::vector<std::int8_t>& v)
{
    Json a = Json::array();
    for (std::int8_t x : v) a.push_back(static_cast<int>(x));
    return a;
}

// One array of int8 outputs per input.
Json logitsListJson(const std::vector<std::vector<std::int8_t>>& list)
{
    Json a = Json::array();
    for (const auto& v : list) a.push_back(logitsJson(v));
    return a;
}

template <class T>
std::string joined(const std::vector<T>& v)
{
    std::string s;
    for (T x : v) s += (s.empty() ? "" : " ") + std::to_string(static_cast<long long>(x));
    return s;
}

Json differenceJson(const DeviceFirstDifference& d, const char* other)
{
    if (d.image < 0) return nullptr;
    return {{"image", d.image}, {"index", d.index}, {"device", d.device}, {other, d.workbench}};
}

// device-run --tflite FILE: the model on the emulated M7 under TFLM + CMSIS-NN, TFLM's reference kernels
// or TinyEngine, against Int8Forward in that runtime's arithmetic (and TFLM on the host).
int runTfliteOnDeviceCommand(const CliArgs& a)
{
    TfliteDeviceRunOptions o;
    o.tflite = a.value("tflite");
    o.engine = deviceEngineFromName(a.value("engine", "tflm"));
    o.images = a.intValue("images", 20, 1, 1000);
    o.data = a.value("data", "fashion-mnist:test");
    o.keep_dir = a.value("keep");
    o.timeout_s = a.intValue("timeout", 1800, 1, 86400);
    const bool boardGiven = a.has("board");
    const BoardProfile board = loadBoard(a.value("board", "stm32f746"));
    const bool json = a.flag("json");
    JobControl job;
    if (!json)
        job.progress = [&o](std::size_t, std::size_t, const std::string& stage) {
            if (stage == "device")
                std::cout << deviceEngineTitle(o.engine) << ": build for Cortex-M7 and emulation (the runtime's first build takes minutes; it is cached) ..." << std::endl;
        };
    job.cancel = &g_interrupted;
    TfliteDeviceRunResult r;
    try {
        InterruptGuard guard;
        r = runTfliteOnDevice(o, job);
    } catch (const CancelledError&) {
        std::cerr << "tinyscope device-run: interrupted; the device pipeline was stopped\n";
        return 130;
    }
    const bool fits = r.sram_bytes <= board.sram_bytes && r.flash_bytes <= board.flash_bytes;
    const char* arithmetic = o.engine == DeviceEngine::TinyEngine ? "tinyengine" : "tflite";
    if (json) {
        Json j;
        j["tflite"] = o.tflite;
        j["engine"] = deviceEngineName(o.engine);
        j["data"] = o.data;
        j["images"] = r.images;
        j["arithmetic"] = arithmetic;
        j["inference_match"] = r.inference_match;
        j["first_difference"] = differenceJson(r.first_difference, "workbench");
        j["host_checked"] = r.host_checked;
        j["host_match"] = r.host_checked ? Json(r.host_match) : Json(nullptr);
        j["host_first_difference"] = r.host_checked ? differenceJson(r.host_first_difference, "host") : Json(nullptr);
        if (!r.host_note.empty()) j["host_note"] = r.host_note;
        if (r.host_checked) j["host_arena_bytes"] = r.host_arena_bytes;
        j["arena_bytes"] = r.arena_bytes;
        j["predicted_arena_bytes"] = r.predicted_arena_bytes < 0 ? Json(nullptr) : Json(r.predicted_arena_bytes);
        j["static_sram_bytes"] = r.static_sram_bytes;
        j["stack_bytes"] = r.stack_bytes;
        j["sram_bytes"] = r.sram_bytes;
        j["flash_bytes"] = r.flash_bytes;
        j["sections"] = {{"text", r.text_bytes}, {"rodata", r.rodata_bytes}, {"model", r.model_bytes}, {"data", r.data_bytes}, {"bss", r.bss_bytes}};
        j["instructions_per_inference"] = r.instructions_per_inference.empty() ? Json(nullptr) : Json(r.instructions_per_inference.front());
        j["instructions_per_inference_each"] = r.instructions_per_inference;
        j["board"] = board.name;
        j["board_sram_bytes"] = board.sram_bytes;
        j["board_flash_bytes"] = board.flash_bytes;
        j["board_fits"] = fits;
        j["codegen_s"] = r.codegen_s;
        j["compile_s"] = r.compile_s;
        j["emulate_s"] = r.emulate_s;
        j["compare_s"] = r.compare_s;
        j["runtime_reused"] = r.runtime_reused;
        j["engine_facts"] = r.engine_facts;
        j["device_outputs"] = logitsListJson(r.device_outputs);
        j["workbench_outputs"] = logitsListJson(r.workbench_outputs);
        if (!o.keep_dir.empty()) j["kept"] = r.work_dir;
        std::cout << j.dump(1) << "\n";
    } else {
        std::cout << "device-run " << o.tflite << ": " << r.images << " input(s) (" << o.data << ") through " << deviceEngineTitle(o.engine)
                  << " on an emulated Cortex-M7 (QEMU mps2-an500)\n";
        for (std::size_t k = 0; k < std::min<std::size_t>(r.device_outputs.size(), 3); ++k)
            std::cout << "  input " << k << " device    " << joined(r.device_outputs[k]) << "\n"
                      << "  input " << k << " workbench " << joined(r.workbench_outputs[k]) << "\n";
        std::cout << "  inference      " << (r.inference_match ? std::string("equals Int8Forward (") + arithmetic + " arithmetic) on every input" : std::string("DIFFERS")) << "\n";
        if (r.host_checked)
            std::cout << "  host TFLM      " << (r.host_match ? "equals the device on every input" : "DIFFERS from the device") << " (x86-64, reference kernels; arena "
                      << r.host_arena_bytes << " B)\n";
        else if (!r.host_note.empty())
            std::cout << "  host TFLM      not compared: " << r.host_note << "\n";
        if (!r.instructions_per_inference.empty())
            std::cout << "  instructions   " << r.instructions_per_inference.front() << " per inference (input 0; QEMU -icount, not cycles)\n";
        std::cout << "  arena          " << r.arena_bytes << " B"
                  << (o.engine == DeviceEngine::TinyEngine ? std::string(" (TinyEngine's buffer: activations, im2col, kernel)")
                                                           : " (arena_used_bytes() on the device; predicted without the file: " + std::to_string(r.predicted_arena_bytes) +
                                                                 (r.predicted_arena_bytes == r.arena_bytes ? " B, equal)" : " B, DIFFERS)"))
                  << "\n"
                  << "  SRAM           " << r.sram_bytes << " B (static " << r.static_sram_bytes << (o.engine == DeviceEngine::TinyEngine ? "" : " + arena " + std::to_string(r.arena_bytes))
                  << " + stack " << r.stack_bytes << ")\n"
                  << "  flash          " << r.flash_bytes << " B (.text " << r.text_bytes << " + .rodata " << r.rodata_bytes
                  << (r.model_bytes ? " + model " + std::to_string(r.model_bytes) : std::string()) << " + .data " << r.data_bytes << ")\n"
                  << "  times          build " << r.codegen_s + r.compile_s << " s" << (r.runtime_reused ? " (runtime from the cache)" : "") << ", emulation " << r.emulate_s
                  << " s, comparison " << r.compare_s << " s\n"
                  << "  board          " << board.name << ": SRAM " << r.sram_bytes << " of " << board.sram_bytes << " B, flash " << r.flash_bytes << " of "
                  << board.flash_bytes << " B: " << (fits ? "fits" : "does NOT fit") << "\n";
        if (!o.keep_dir.empty()) std::cout << "  build folder   " << r.work_dir << "\n";
    }
    int rc = 0;
    if (!r.inference_match) {
        const DeviceFirstDifference& d = r.first_difference;
        std::cerr << "tinyscope device-run: the device disagrees with the workbench: input " << d.image << ", output " << d.index << ": device " << d.device
                  << ", Int8Forward (" << arithmetic << ") " << d.workbench << "\n";
        rc = 4;
    }
    if (r.host_checked && !r.host_match) {
        const DeviceFirstDifference& d = r.host_first_difference;
        std::cerr << "tinyscope device-run: " << deviceEngineTitle(o.engine) << " on the device disagrees with TFLM's reference kernels on the host: input " << d.image
                  << ", output " << d.index << ": device " << d.device << ", host " << d.workbench << "\n";
        rc = 4;
    }
    if (rc == 0 && boardGiven && !fits) {
        std::cerr << "tinyscope device-run: the model does not fit " << board.name << " under " << deviceEngineTitle(o.engine) << ": SRAM " << r.sram_bytes << " of "
                  << board.sram_bytes << " B, flash " << r.flash_bytes << " of " << board.flash_bytes << " B\n";
        rc = 2;
    }
    return rc;
}

const char* const kDeviceRunHelp =
    "usage: tinyscope device-run --export DIR [--images N] [--steps K] [--data DATASET] [--keep DIR] [--timeout S]\n"
    "                            [--arithmetic tinyengine|exact] [--board NAME|FILE] [--json]\n"
    "       tinyscope device-run --tflite FILE [--engine tflm|tflm-reference|tinyengine] [--images N]\n"
    "                            [--data fashion-mnist:test|DIR|synthetic] [--board NAME|FILE] [--keep DIR] [--timeout S] [--json]\n"
    "  --tflite: a Tinyscope int8 .tflite (tinyscope deploy --format tflite) on an emulated Cortex-M7, linked into\n"
    "  flash and run for inference on N inputs (default 20 of fashion-mnist:test at the file's resolution;\n"
    "  synthetic: the LCG images) by TensorFlow Lite Micro with CMSIS-NN's kernels (tflm, default), TFLM's\n"
    "  reference kernels (tflm-reference) or TinyEngine's TFLite code generator (tinyengine; models without\n"
    "  squeeze-and-excite). The device's int8 outputs are compared with Int8Forward in the runtime's\n"
    "  arithmetic (TFLite's, TinyEngine's) and, for TFLM, with TFLM built for the host on the same inputs.\n"
    "  Reported from the binary and the run: arena, SRAM (static + arena + stack high-water mark), flash,\n"
    "  instructions per inference, the board's fit. A corrupt or foreign file is refused before any build.\n"
    "  Exit 0: all equal; 4: a difference (input, output index and both values printed); 2: bad input, a\n"
    "  missing tool, a model the runtime refuses, or (--board given) a model that does not fit the board.\n\n"
    "  Runs a TinyEngine export (DIR: one *-graph.json, one params *.pkl, scale.json) on an emulated\n"
    "  Cortex-M7: TinyEngine's code generator, arm-none-eabi-gcc, QEMU mps2-an500 (docs/DEVICE_RUNNER.md).\n"
    "  N synthetic images (1..100, default 2; image 0 = the LCG image of the docs, the others the same\n"
    "  LCG stream continued) are run with invoke_inf(), then K training steps (default 1; step k on\n"
    "  image k mod N, class (3 + k) mod classes). The device's int8 logits are compared with Int8Forward\n"
    "  in TinyEngine's arithmetic, its parameters after the K steps with the same steps on the workbench\n"
    "  (GraphInterpreter on the exported graph + TinyEngine's QAS update; integers exactly).\n"
    "  --steps K      training steps, 0..1000 (0: inference only)\n"
    "  --data DATASET the first N images of a dataset instead (e.g. fashion-mnist:test), resized to\n"
    "                 the graph's input, quantized with the export's input scale; step k uses\n"
    "                 image k mod N with its label\n"
    "  --arithmetic A compare with Int8Forward in TinyEngine's arithmetic (default) or the graph's\n"
    "                 exact one (then exit 4 says where TinyEngine's kernels depart from it)\n"
    "  --board B      SRAM and flash measured on the device against a board (models/boards/*.json\n"
    "                 preset or a board file; default stm32f746, the board TinyEngine's flags\n"
    "                 build for; reported, not part of the exit code)\n"
    "  --keep DIR     keep the build folder there (default: a temporary folder, removed)\n"
    "  --timeout S    kill the run after S seconds (default 1800) and report it as a hang\n"
    "  exit 0: the device's logits and trained parameters equal the workbench's; 4: they differ (the\n"
    "  first image and logit, or parameter and element, printed); 2: bad input, a missing tool (the\n"
    "  Debian package named) or a failed compile/run;\n"
    "  130: interrupted (the pipeline's processes are killed)\n";

// The --export run's options.
DeviceRunOptions exportRunOptions(const CliArgs& a)
{
    if (a.has("engine")) throw InputError("--engine applies to --tflite FILE");
    if (!a.has("export")) throw InputError("give the export folder (--export DIR) or a .tflite model (--tflite FILE)");
    DeviceRunOptions o;
    o.export_dir = a.value("export");
    o.synthetic_images = a.intValue("images", 2, 1, 100);
    o.data = a.value("data");
    o.steps = a.intValue("steps", 1, 0, 1000);
    o.keep_dir = a.value("keep");
    o.timeout_s = a.intValue("timeout", 1800, 1, 86400);
    const std::string arith = a.value("arithmetic", "tinyengine");
    if (arith == "exact") o.arithmetic = Int8Arithmetic::Exact;
    else if (arith != "tinyengine") throw InputError("--arithmetic '" + arith + "': expected tinyengine or exact");
    return o;
}

// The --export run as JSON (--json).
Json exportRunJson(const DeviceRunOptions& o, const DeviceRunResult& r, const BoardProfile& board)
{
    auto perCall = [](const std::vector<std::int64_t>& v) { return v.empty() ? Json(nullptr) : Json(v.front()); };
    Json j;
    j["export"] = o.export_dir;
    j["data"] = o.data.empty() ? Json("lcg") : Json(o.data);
    j["arithmetic"] = int8ArithmeticName(o.arithmetic);
    j["images"] = r.images;
    j["steps"] = r.steps;
    j["inference_match"] = r.inference_match;
    j["first_difference"] = r.inference_match ? Json(nullptr)
                                              : Json{{"image", r.first_difference.image},
                                                     {"logit", r.first_difference.index},
                                                     {"device", r.first_difference.device},
                                                     {"workbench", r.first_difference.workbench}};
    j["training_match"] = r.training_checked ? Json(r.training_match) : Json(nullptr);
    j["max_param_rel_error"] = r.training_checked ? Json(r.max_param_rel_error) : Json(nullptr);
    j["training_difference"] = r.training_checked && !r.training_match ? Json(r.training_difference) : Json(nullptr);
    Json params = Json::array();
    for (const DeviceParamCheck& c : r.params) {
        Json q = {{"name", c.name},       {"dtype", c.dtype},         {"elements", c.elements},          {"changed_device", c.changed_device},
                  {"mismatches", c.mismatches}, {"at_boundary", c.at_boundary}, {"max_abs_error", c.max_abs_error}};
        if (c.dtype == "int8") q["wrapped"] = c.wrapped;
        if (c.mismatches > 0)
            q["first_mismatch"] = {{"index", c.first_mismatch}, {"step", c.first_step}, {"device", c.first_device}, {"workbench", c.first_workbench}, {"before", c.first_before}};
        params.push_back(q);
    }
    j["trained_params"] = params;
    if (!r.classifier_bias.empty())
        j["classifier_bias"] = {{"name", r.classifier_bias},
                                {"delta_device", r.classifier_bias_delta_device},
                                {"delta_predicted", r.classifier_bias_delta_predicted},
                                {"match", r.classifier_bias_delta_device == r.classifier_bias_delta_predicted}};
    j["board"] = board.name;
    j["board_sram_bytes"] = board.sram_bytes;
    j["board_flash_bytes"] = board.flash_bytes;
    j["board_fits"] = r.sram_bytes <= board.sram_bytes && r.flash_bytes <= board.flash_bytes;
    j["sram_bytes"] = r.sram_bytes;
    j["flash_bytes"] = r.flash_bytes;
    j["ledger_sram_bytes"] = r.ledger_sram_bytes;
    j["params_flash_bytes"] = r.params_flash_bytes;
    j["sections"] = {{"text", r.text_bytes}, {"rodata", r.rodata_bytes}, {"data", r.data_bytes}, {"bss", r.bss_bytes}};
    j["stack_high_water"] = {{"inference", r.stack_inference_bytes}, {"training", r.stack_training_bytes}};
    j["instructions_per_inference"] = perCall(r.instructions_per_inference);
    j["instructions_per_inference_each"] = r.instructions_per_inference;
    j["instructions_per_step"] = perCall(r.instructions_per_step);
    j["instructions_per_step_each"] = r.instructions_per_step;
    j["codegen_s"] = r.codegen_s;
    j["compile_s"] = r.compile_s;
    j["emulate_s"] = r.emulate_s;
    j["kernel_archive_reused"] = r.kernel_archive_reused;
    j["device_logits"] = logitsListJson(r.device_logits);
    j["workbench_logits"] = logitsListJson(r.workbench_logits);
    if (!o.keep_dir.empty()) j["kept"] = r.work_dir;
    return j;
}

// The --export run as text.
void printExportRun(const DeviceRunOptions& o, const DeviceRunResult& r, const BoardProfile& board)
{
    const bool biasDiffers = !r.classifier_bias.empty() && r.classifier_bias_delta_device != r.classifier_bias_delta_predicted;
    std::cout << "device-run " << o.export_dir << ": " << r.images << " image(s), " << r.steps << " training step(s) on emulated Cortex-M7 (QEMU mps2-an500)\n";
    for (std::size_t k = 0; k < r.device_logits.size(); ++k)
        std::cout << "  image " << k << " device    " << joined(r.device_logits[k]) << "\n"
                  << "  image " << k << " workbench " << joined(r.workbench_logits[k]) << "\n";
    std::cout << "  inference      " << (r.inference_match ? std::string("matches Int8Forward (") + int8ArithmeticName(o.arithmetic) + " arithmetic) exactly" : std::string("DIFFERS")) << "\n";
    if (!r.classifier_bias.empty()) {
        std::cout << "  training step  " << r.classifier_bias << " changed by " << joined(r.classifier_bias_delta_device)
                  << (biasDiffers ? " (the workbench's step: " + joined(r.classifier_bias_delta_predicted) + ")" : " (as the workbench's step)") << "\n";
    }
    if (r.training_checked) {
        std::int64_t changed = 0, wrapped = 0, boundary = 0;
        for (const DeviceParamCheck& c : r.params) {
            changed += c.changed_device;
            wrapped += c.wrapped;
            boundary += c.at_boundary;
        }
        std::cout << "  parameters     " << r.params.size() << " arrays, " << changed << " elements changed on the device in " << r.steps << " step(s) ("
                  << wrapped << " int8 updates wrapped): "
                  << (r.training_match ? "every step equals the workbench's (GraphInterpreter + TinyEngine's update)" : "DIFFER: " + r.training_difference)
                  << (boundary > 0 ? "; " + std::to_string(boundary) + " element(s) differ within the gradient tolerance (1e-5 relative)" : std::string()) << "\n";
    }
    if (!r.instructions_per_inference.empty()) std::cout << "  instructions   " << r.instructions_per_inference.front() << " per inference (image 0; QEMU -icount, not cycles)\n";
    if (!r.instructions_per_step.empty()) std::cout << "                 " << r.instructions_per_step.front() << " per training step\n";
    std::cout << "  SRAM           " << r.sram_bytes << " B (.data " << r.data_bytes << " + .bss " << r.bss_bytes << " + stack "
              << std::max(r.stack_inference_bytes, r.stack_training_bytes) << "); the memory ledger's peak " << r.ledger_sram_bytes << " B\n"
              << "  flash          " << r.flash_bytes << " B (.text " << r.text_bytes << " + .rodata " << r.rodata_bytes << " + .data " << r.data_bytes
              << "); the parameters " << r.params_flash_bytes << " B\n"
              << "  times          codegen " << r.codegen_s << " s, compile+link " << r.compile_s << " s"
              << (r.kernel_archive_reused ? " (kernel archive reused)" : "") << ", emulation " << r.emulate_s << " s\n";
    std::cout << "  board          " << board.name << ": SRAM " << r.sram_bytes << " of " << board.sram_bytes << " B, flash " << r.flash_bytes << " of "
              << board.flash_bytes << " B: " << (r.sram_bytes <= board.sram_bytes && r.flash_bytes <= board.flash_bytes ? "fits" : "does NOT fit") << "\n";
    if (!o.keep_dir.empty()) std::cout << "  build folder   " << r.work_dir << "\n";
}

// The one-line verdict on stderr and the exit code: 4 when the device and the workbench disagree.
int exportRunVerdict(const DeviceRunOptions& o, const DeviceRunResult& r)
{
    if (r.training_checked && !r.training_match) {
        std::cerr << "tinyscope device-run: the trained parameters differ: " << r.training_difference << "\n";
        if (r.inference_match) return 4;
    }
    if (!r.inference_match) {
        std::cerr << "tinyscope device-run: the device disagrees with the workbench: image " << r.first_difference.image << ", logit "
                  << r.first_difference.index << ": device " << r.first_difference.device << ", Int8Forward (" << int8ArithmeticName(o.arithmetic) << ") "
                  << r.first_difference.workbench << "\n";
        return 4;
    }
    return 0;
}

// device-run --export DIR: a TinyEngine export's inference and training steps on the emulated M7.
int runExportOnDeviceCommand(const CliArgs& a)
{
    const DeviceRunOptions o = exportRunOptions(a);
    // TinyEngine's flags build for the STM32F746 (-DSTM32F746xx): the default board, as in the Export dialog.
    const BoardProfile board = loadBoard(a.value("board", "stm32f746"));
    const bool json = a.flag("json");
    JobControl job;
    // Progress on stdout (text form only), so stderr holds nothing but the one-line error of a failed run.
    if (!json)
        job.progress = [](std::size_t, std::size_t, const std::string& stage) {
            if (stage == "device") std::cout << "code generation, compile and emulation (about a minute the first time) ..." << std::endl;
        };
    job.cancel = &g_interrupted;
    DeviceRunResult r;
    try {
        InterruptGuard guard;
        r = runOnDevice(o, job);
    } catch (const CancelledError&) {
        std::cerr << "tinyscope device-run: interrupted; the device pipeline was stopped\n";
        return 130;
    }
    if (json) std::cout << exportRunJson(o, r, board).dump(1) << "\n";
    else printExportRun(o, r, board);
    return exportRunVerdict(o, r);
}

int cmdDeviceRun(const Args& argv)
{
    CliArgs a(argv, {"export", "tflite", "engine", "images", "steps", "keep", "timeout", "data", "arithmetic", "board"}, {"json", "help"});
    if (a.flag("help")) {
        std::cout << kDeviceRunHelp;
        return 0;
    }
    if (!a.positionals().empty()) throw InputError("unexpected argument '" + a.positionals()[0] + "' (give the folder with --export DIR or the model with --tflite FILE)");
    if (a.has("tflite")) {
        for (const char* k : {"export", "steps", "arithmetic"})
            if (a.has(k)) throw InputError(std::string("--") + k + " applies to --export, not to --tflite");
        return runTfliteOnDeviceCommand(a);
    }
    return runExportOnDeviceCommand(a);
}

}  // namespace

std::vector<Command> deviceCommands()
{
    return {{"device-run", "run a TinyEngine export or a .tflite model on an emulated Cortex-M7 and compare it with the workbench", cmdDeviceRun}};
}

}  // namespace tinyscope::cli
