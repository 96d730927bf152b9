#pragma once
// Device in the loop (issue 17, docs/DEVICE_RUNNER.md): runs a TinyEngine export on an emulated
// Cortex-M7 and compares what the device computed with the workbench. The pipeline (TinyEngine's
// code generator, arm-none-eabi-gcc with TinyEngine's flags, the project's startup code, linker
// script and harness, QEMU mps2-an500 with semihosting and the instruction-counting plugin) is
// resources/device/run_export.sh; this seam checks the tools, writes the inputs, runs the script in
// its own process group (timeout, cancellation), parses its summary and compares the int8 logits
// with Int8Forward in TinyEngine's arithmetic. Torch-free, Qt-free.
#include "JobControl.h"
#include "io/JsonFile.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/Int8Forward.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct DeviceRunOptions {
    std::string export_dir;                 // one *-graph.json, one *.pkl, one scale.json
    // Images in the graph's NCHW `input` layout (int8), each input-elements long; the runner
    // transposes them to the HWC layout the generated code reads.
    std::vector<std::vector<std::int8_t>> images;
    int synthetic_images = 0;               // when `images` is empty: lcgImages(synthetic_images, …) of the graph's input shape
    // Or, when `images` is empty and this is set, the first `synthetic_images` items of a dataset
    // (openDataset spec, e.g. "fashion-mnist:test") at the graph's resolution, normalised with the
    // default Normalization and quantized with Int8Forward::quantizeInput.
    std::string data;
    // One training step per label: step k uses image k % N with class labels[k]. May be empty.
    std::vector<int> labels;
    // When `labels` is empty: this many steps, step k on image k % N with that image's dataset label
    // (`data`) or class (3 + k) mod classes (synthetic images). 0 = no training step.
    int steps = 0;
    std::string keep_dir;                   // build folder kept here; empty = a temporary folder, removed
    std::string kernel_cache;               // compiled kernel archives; empty = <user state>/device-kernels
    // The workbench side of the comparison: TinyEngine's arithmetic (what the device should compute),
    // or Exact (the graph's semantics: where TinyEngine's kernels depart from them).
    Int8Arithmetic arithmetic = Int8Arithmetic::TinyEngine;
    double timeout_s = 1800;                // the whole pipeline; beyond it the run is killed and reported as a hang
};

struct DeviceFirstDifference {
    int image = -1, index = -1;             // first image and logit index that differ
    int device = 0, workbench = 0;
};

// One parameter the training step updates: the device's values after the step against the workbench's.
struct DeviceParamCheck {
    std::string name;                       // graph parameter ("v9_conv_0_weight")
    std::string dtype;                      // "int8" or "int32"
    std::int64_t elements = 0;              // elements the device updates (a partial-channel weight: the first k input channels)
    std::int64_t changed_device = 0;        // elements whose value differs after the last step from the export's
    // Per step, from the device's values before it (every step checked on its own; counts summed over steps):
    std::int64_t mismatches = 0;            // elements whose value after the step differs from the workbench's
    std::int64_t at_boundary = 0;           // differ, but a gradient within 1e-5 relative of the workbench's gives the device's value (not mismatches)
    std::int64_t wrapped = 0;               // int8 elements whose update left [-128, 127] and wrapped modulo 256 (workbench)
    std::int64_t max_abs_error = 0;         // max |device − workbench| over the mismatches
    std::int64_t first_mismatch = -1;       // the first mismatch: element index (in the device's array), -1 if none
    int first_step = -1;                    // … the step (0-based) after which it differs
    std::int64_t first_device = 0, first_workbench = 0, first_before = 0;
};

struct DeviceRunResult {
    std::string work_dir;                   // where the build was (removed unless kept)
    int images = 0, steps = 0, classes = 0;
    std::vector<std::vector<std::int8_t>> device_logits, workbench_logits;   // per image
    bool inference_match = false;
    DeviceFirstDifference first_difference; // when !inference_match
    // The classifier's bias in the first training step: the device's change (after − before) and the
    // workbench's (tinyEngineTrainingStep), side by side. Empty when the scheme does not train it.
    std::string classifier_bias;                                     // the parameter's name ("v15_bias")
    std::vector<std::int64_t> classifier_bias_delta_device, classifier_bias_delta_predicted;
    // The parameters after each training step against the same step on the workbench: GraphInterpreter
    // running the exported graph on the same image and label (forward values from Int8Forward in
    // TinyEngine's arithmetic, the graph's float backward), then TinyEngine's update rule
    // (tinyEngineTrainingStep; docs/DEVICE_RUNNER.md "The training step on the workbench"). Step k
    // starts from the device's values after step k − 1. `training_checked` false without steps.
    bool training_checked = false;
    bool training_match = false;            // every element equal, or the outcome of a gradient within 1e-5 relative (at_boundary)
    double max_param_rel_error = 0;         // max over elements of |device − workbench| / max(1, |workbench|)
    std::string training_difference;        // when !training_match: the first parameter and element that differ
    std::vector<DeviceParamCheck> params;   // one per updated parameter, in the device's table order
    std::vector<std::int64_t> instructions_per_inference, instructions_per_step;
    std::int64_t text_bytes = 0, rodata_bytes = 0, data_bytes = 0, bss_bytes = 0;
    std::int64_t stack_inference_bytes = 0, stack_training_bytes = 0;
    std::int64_t sram_bytes = 0;            // .data + .bss + the larger stack high-water mark
    std::int64_t flash_bytes = 0;           // .text + .rodata + .data (+ .ARM.exidx/.extab) as the script sums them
    // The workbench's figures for the same export (boardUse): the memory ledger's training peak and the
    // params pickle's bytes, to set beside the binary's.
    std::int64_t ledger_sram_bytes = 0, params_flash_bytes = 0;
    double codegen_s = 0, compile_s = 0, emulate_s = 0;
    bool kernel_archive_reused = false;
    std::string summary_json;               // the script's summary.json, verbatim
};

// The Debian package of the first missing tool ("" if all are there). Looks on PATH for
// arm-none-eabi-gcc, qemu-system-arm and gcc, then asks arm-none-eabi-gcc for newlib's
// rdimon.specs and /usr/bin/python3 for numpy, matplotlib and tqdm.
std::string missingDevicePackage();

// Runs the pipeline. Bad input, a missing tool (one line naming the Debian package), a failed
// codegen / compile / link (the first message and the file), a fault on the board or a hang (the
// last line the pipeline printed) throw InputError; job.cancel stops the run (CancelledError).
// job.progress gets the stages "tools", "device", "compare".
DeviceRunResult runOnDevice(const DeviceRunOptions& options, const JobControl& job = {});

// The training-step comparison of runOnDevice, on what the device wrote: its parameter table
// (summary.json "updated_params": name, array, dtype, bytes in dump order), the table's bytes before
// training and after each of the labels.size() steps (params_steps.bin). Step k (image k % N, class
// labels[k]) runs on the workbench from the device's values after step k − 1. Fills
// training_checked, training_match, training_difference, max_param_rel_error and params of `r`.
// A table or dump that does not fit throws InputError.
void compareTrainingSteps(const ImportedGraph& im, const std::vector<std::vector<std::int8_t>>& images, const std::vector<int>& labels,
                          const Json& updatedParams, const std::string& before, const std::string& dumps, DeviceRunResult& r,
                          const JobControl& job = {});

// The synthetic images of docs/DEVICE_RUNNER.md: one stream of the LCG x ← 1664525·x + 1013904223
// (mod 2³², x₀ = 1), one byte x >> 24 per step, filling image 0 then image 1 … in the device's HWC
// byte order; returned in NCHW (c, h, w). Image 0 is the docs' "LCG image".
std::vector<std::vector<std::int8_t>> lcgImages(int count, int channels, int height, int width);

}  // namespace tinyscope
