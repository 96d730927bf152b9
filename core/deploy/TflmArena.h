#pragma once
// TensorFlow Lite Micro's arena for a network, predicted without building a file: the bytes
// `MicroInterpreter::arena_used_bytes()` reports after AllocateTensors() for the .tflite file our
// writer (deploy/TfliteExport) would produce, as head + tail (docs/DEPLOY.md "Predicting TFLM's
// arena"). The search calls it on thousands of candidates, so it works from the Network alone, in
// microseconds: no parameters, no flatbuffer.
//
//   head  the non-persistent section: TFLM's GreedyMemoryPlanner laying out the activations the
//         file's ops need and the kernels' scratch buffers, reimplemented step by step (buffers in
//         TFLM's order, its stable descending sort, first-fit placement, 16-byte sizes);
//   tail  the persistent section, allocated from the arena's end one record at a time with each
//         record's own alignment: the allocator objects and planner, eval tensors, node records,
//         the ops' parsed options (builtin data), the kernels' op data and per-channel multipliers
//         and shifts, scratch-buffer handles, and the input/output TfLiteTensors with their
//         quantization.
//
// Struct sizes and alignments are those of TFLM at the pinned commit, measured by compiling its
// headers for each target (x86-64 g++; arm-none-eabi-g++ -mcpu=cortex-m7, short enums), and the
// CMSIS-NN scratch rules are its *_get_buffer_size functions for a core with the DSP extension and
// no MVE, built with GCC. The arena is assumed 16-byte aligned at both ends (tflm_run's and the
// device harness's are). Qt-free, torch-free.
#include "io/JsonFile.h"
#include "zoo/Network.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

enum class TflmKernels { Reference, CmsisNn };

// The build TFLM runs as. pointer_bytes 8: x86-64 System V (the host's tflm_run); 4: the ARM EABI of
// arm-none-eabi-gcc (4-byte pointers, short enums), as the Cortex-M7 device build.
struct TflmTarget {
    int pointer_bytes = 8;
    TflmKernels kernels = TflmKernels::Reference;

    static TflmTarget host() { return {8, TflmKernels::Reference}; }     // tests/tflm/tflm_run
    static TflmTarget cortexM7() { return {4, TflmKernels::CmsisNn}; }   // the emulated device, CMSIS-NN kernels
    std::string describe() const;   // "64-bit, reference kernels", "32-bit Cortex-M7, CMSIS-NN kernels"
    Json toJson() const;            // {pointer_bytes, kernels: "reference" | "cmsis-nn"}
};

// One buffer of the head's plan: an activation tensor (named as in the file) or a kernel's scratch
// buffer, its size aligned to 16, its lifetime in op indices (-1: the graph input) and its offset.
struct TflmPlannedBuffer {
    std::string name;
    std::int64_t bytes = 0;
    int first_op = 0, last_op = 0;
    bool scratch = false;
    std::int64_t offset = 0;
};

// The tail by kind of record. Each part holds its records' bytes plus the alignment padding placed
// before them, so the parts add up to the tail exactly.
struct TflmTailParts {
    std::int64_t runtime = 0;          // arena allocator, greedy planner, MicroAllocator, builtin-data allocator, subgraph record, input/output pointer arrays
    std::int64_t eval_tensors = 0;     // one TfLiteEvalTensor per tensor of the file (constants too)
    std::int64_t nodes = 0;            // one NodeAndRegistration per op
    std::int64_t op_options = 0;       // the ops' parsed builtin options (TfLiteConvParams, ...)
    std::int64_t op_data = 0;          // the kernels' OpData (Init)
    std::int64_t per_channel = 0;      // the convs' and the classifier's per-channel multipliers and shifts (Prepare)
    std::int64_t scratch_handles = 0;  // one ScratchBufferHandle per scratch buffer
    std::int64_t io_tensors = 0;       // the persistent TfLiteTensors of the input and output, with their quantization
    std::int64_t sum() const;
    Json toJson() const;
};

struct TflmArenaPrediction {
    TflmTarget target;
    std::int64_t arena_used_bytes = 0;   // head + tail
    std::int64_t head_bytes = 0;         // the greedy planner's layout
    std::int64_t tail_bytes = 0;
    TflmTailParts tail;
    std::int64_t scratch_bytes = 0;      // all scratch buffers requested (aligned to 16), whether live together or not
    std::int64_t live_peak_bytes = 0;    // the most bytes live during one op (head ≥ this; equal when the layout has no gaps)
    int live_peak_op = -1;
    std::string live_peak_op_type;
    std::vector<std::string> ops;        // op types in execution order, as the file has them
    int tensors = 0;                     // tensors of the file
    std::vector<TflmPlannedBuffer> buffers;   // in the order the allocator hands them to the planner
    Json toJson(bool withBuffers = false) const;
};

// The arena TFLM reports for the file buildTflite(net, …) writes. InputError when the writer would
// refuse the network (tfliteObstacle's reason).
TflmArenaPrediction predictTflmArena(const Network& net, const TflmTarget& target = TflmTarget::host());

}  // namespace tinyscope
