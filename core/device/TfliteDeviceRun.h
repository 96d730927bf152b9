#pragma once
// A Tinyscope int8 .tflite model on the emulated Cortex-M7 (issue 48, docs/DEVICE_RUNNER.md "A .tflite
// on the device"): the second kind of job of the device pipeline (DevicePipeline.h). The file is read
// and checked first (deploy/TfliteRead.h: a corrupt or foreign file is refused before anything is
// compiled); the inputs are written; run_export.sh builds the chosen runtime for the M7 — TensorFlow
// Lite Micro with CMSIS-NN's kernels, TFLM with its reference kernels, or TinyEngine's TFLite code
// generator and kernels — links the model into flash and runs it under QEMU; the device's int8
// outputs are compared with Int8Forward in that runtime's arithmetic, and (TFLM) with TFLM built for
// the host. Figures come from the real binary and run: arena, static RAM, stack high-water mark,
// flash, instructions per inference (QEMU -icount, never cycles). Torch-free, Qt-free.
#include "JobControl.h"
#include "device/DeviceRunner.h"
#include "io/JsonFile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

enum class DeviceEngine { Tflm, TflmReference, TinyEngine };
const char* deviceEngineName(DeviceEngine e);          // "tflm", "tflm-reference", "tinyengine"
const char* deviceEngineTitle(DeviceEngine e);         // "TFLM + CMSIS-NN", "TFLM (reference kernels)", "TinyEngine"
DeviceEngine deviceEngineFromName(const std::string& name);   // throws InputError listing the names

struct TfliteDeviceRunOptions {
    std::string tflite;
    DeviceEngine engine = DeviceEngine::Tflm;
    int images = 20;
    // "synthetic": the LCG images of docs/DEVICE_RUNNER.md in the file's input shape; else a dataset
    // (openDataset spec: "fashion-mnist:test", a folder), its first `images` items at the file's
    // resolution, normalised with the file's metadata and quantized with its input scale and zero point.
    std::string data = "fashion-mnist:test";
    bool check_host = true;                 // TFLM engines: also run the host's tflm_run on the same inputs
    std::string keep_dir, kernel_cache;
    double timeout_s = 1800;
};

struct TfliteDeviceRunResult {
    DeviceEngine engine = DeviceEngine::Tflm;
    std::string work_dir;
    int images = 0;
    std::vector<std::vector<std::int8_t>> device_outputs, workbench_outputs;
    bool inference_match = false;
    DeviceFirstDifference first_difference;           // index = the output index
    // The same inputs through TFLM built for the host (x86-64, reference kernels): does the device's
    // runtime agree with TFLM's reference kernels, and the workbench with both? Not run for TinyEngine
    // or without tflm_run (host_note says why).
    bool host_checked = false, host_match = false;    // host == device
    DeviceFirstDifference host_first_difference;      // device vs host, when !host_match
    std::string host_note;
    std::vector<std::vector<std::int8_t>> host_outputs;
    std::int64_t host_arena_bytes = 0;                // tflm_run's arena_used_bytes (64-bit host)

    std::int64_t arena_bytes = 0;           // TFLM: arena_used_bytes() on the device; TinyEngine: its buffer[PEAK_MEM]
    // TFLM engines: the arena deploy/TflmArena predicts for the file's network on this build (32-bit,
    // CMSIS-NN or reference kernels), without the file: what `search --runtime tflm` bounds. -1: not predicted.
    std::int64_t predicted_arena_bytes = -1;
    std::int64_t static_sram_bytes = 0;     // .data + .bss without TFLM's arena array (TinyEngine's buffers included)
    std::int64_t stack_bytes = 0;           // measured stack high-water mark over the inferences
    std::int64_t sram_bytes = 0;            // static + (TFLM) arena + stack
    std::int64_t flash_bytes = 0;           // .text + .rodata + the model + .data's load image
    std::int64_t text_bytes = 0, rodata_bytes = 0, data_bytes = 0, bss_bytes = 0;
    std::int64_t model_bytes = 0;           // TFLM: the .tflite linked in (section .tinyscope_model); TinyEngine: 0 (its weights are .rodata)
    std::vector<std::int64_t> instructions_per_inference;
    double compile_s = 0, codegen_s = 0, emulate_s = 0, compare_s = 0;
    bool runtime_reused = false;            // the runtime / kernel archive came from the cache
    Json engine_facts;                      // the engine's own figures (summary.json "engine_facts")
    std::string summary_json;
};

// The Debian package of the first missing tool for `engine` ("" if all are there).
std::string missingTfliteDevicePackage(DeviceEngine engine);

// Runs the job. A corrupt or foreign file, bad options, a missing tool (the Debian package named), a
// runtime that refuses the model (TinyEngine's generator, an op, an arena larger than the emulated
// board's RAM), a compile or link error and a hang throw InputError with one line; job.cancel stops it
// (CancelledError). job.progress gets "read", "device", "host", "compare".
TfliteDeviceRunResult runTfliteOnDevice(const TfliteDeviceRunOptions& options, const JobControl& job = {});

}  // namespace tinyscope
