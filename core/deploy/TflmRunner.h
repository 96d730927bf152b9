#pragma once
// TensorFlow Lite Micro on the host, as the workbench runs it: the tflm_run program (tests/tflm,
// compiled by the project's CMake from ../shared/reference/runtimes when that tree is there) in its
// own process group, on a .tflite file and N inputs, read back as figures: the int8 outputs, TFLM's
// arena_used_bytes / least arena, the arena's head (planned activations and scratch) and tail
// (persistent records), and the head op by op from TFLM's own memory planner (docs/DEPLOY.md
// "TensorFlow Lite Micro on the host"). Qt-free, torch-free.
#include "JobControl.h"
#include "io/JsonFile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

// One buffer of TFLM's plan: a tensor of the file (by name) or a kernel's scratch buffer, with its
// lifetime in op indices (-1: the graph input, before the first op).
struct TflmBuffer {
    std::string name;   // the tensor's name, or "scratch of op K"
    std::int64_t bytes = 0;
    int first_op = 0, last_op = 0;
    bool scratch = false;
};

struct TflmRunReport {
    std::int64_t arena_used_bytes = 0;   // MicroInterpreter::arena_used_bytes(): head + tail
    std::int64_t min_arena_bytes = 0;    // the least arena AllocateTensors accepts
    std::int64_t head_bytes = 0;         // non-persistent: the planned activations and scratch buffers
    std::int64_t tail_bytes = 0;         // persistent: eval tensors, nodes, op data, quantization (arena_used − head)
    std::int64_t planned_bytes = 0;      // the greedy planner's layout (= head_bytes)
    std::int64_t live_peak_bytes = 0;    // the most bytes live during one op (inputs, outputs, scratch, kept activations)
    int live_peak_op = -1;               // that op's index, and its type
    std::string live_peak_op_type;
    std::vector<TflmBuffer> live_at_peak;
    std::vector<std::int64_t> live_bytes_per_op;
    std::vector<std::string> ops;        // op types in execution order
    int pad_ops = 0;                     // PAD ops: each holds a padded copy of its input
    std::vector<std::vector<double>> outputs;   // per image, the output tensor's values
    std::vector<double> invoke_us;       // per image, Invoke()'s wall time (a figure, never a threshold)
    Json breakdown;                      // tflm_run's arena_breakdown (recorded allocations by type)
};

// The tflm_run installed beside the program (<prefix>/libexec/tinyscope), else the one this build made
// ($TINYSCOPE_TFLM_RUN overrides both); "" when there is none.
std::string tflmRunBinary();
// Why there is no tflm_run ("" when there is one): names what configure lacked.
std::string tflmRunMissing();

// Runs `images` inputs (back to back in `inputs`, each exactly the input tensor's bytes) through TFLM.
// No tflm_run, a model TFLM refuses, inputs of the wrong size: InputError with tflm_run's one line.
// `arena_bytes` is the arena tflm_run gets (0: its default, 2 MiB). job.cancel stops it
// (CancelledError); `timeout_s` bounds it.
TflmRunReport runTflm(const std::string& tflitePath, const std::vector<std::int8_t>& inputs, int images,
                      std::int64_t arena_bytes = 0, const JobControl& job = {}, double timeout_s = 600);

// tflm_run's JSON as a report (exposed for the tests).
TflmRunReport tflmReportFromJson(const Json& j);

}  // namespace tinyscope
