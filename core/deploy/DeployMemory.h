#pragma once
// One memory figure checked against three engines: for one int8 .tflite file, the workbench's
// peak SRAM (its cost model), TinyEngine's scheduled arena and PEAK_MEM (its TFLite code generator)
// and TensorFlow Lite Micro's arena (tflm_run: head, tail, the head op by op), side by side, each row
// with the reason it differs from ours, worked out from the figures themselves (docs/DEPLOY.md "One
// memory figure, three engines"). An engine that is not available here, or refuses the model, is a
// row saying so, not an error. Qt-free, torch-free.
#include "JobControl.h"
#include "deploy/TflmRunner.h"
#include "deploy/TinyEngineTfliteCodegen.h"
#include "io/JsonFile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinyscope {

struct EngineMemoryRow {
    std::string engine;                 // "Tinyscope", "TinyEngine", "TFLM"
    std::string figure;                 // what the number is
    std::optional<std::int64_t> bytes;  // none: the engine refused the model or is not available
    std::string why;                    // the difference to our peak, or why there is no number
    bool total = false;                 // the engine's whole figure, the one a board's SRAM must hold
};

struct DeployMemoryComparison {
    std::int64_t ours_peak_sram_bytes = 0, ours_flash_bytes = 0;   // ours flash: int8 weights + int32 biases
    // The .tflite file itself: the weights and biases, the per-channel scales and zero points
    // (float32 and int64 each), the graph and tensor metadata. Under TFLM the whole file sits in flash.
    std::int64_t file_bytes = 0;
    std::optional<TflmRunReport> tflm;
    std::string tflm_unavailable;                 // why tflm is empty
    std::optional<TinyEngineTfliteReport> tinyengine;
    std::string tinyengine_unavailable;           // why tinyengine is empty
    std::vector<EngineMemoryRow> rows() const;
    Json toJson() const;   // {ours, tflm, tinyengine, rows}
};

// Runs TFLM (one input of `input_bytes` zero-point bytes: memory does not depend on the values) and
// TinyEngine's generator on `tflitePath`; progress "TFLM", "TinyEngine". Cancel: CancelledError.
DeployMemoryComparison compareDeployMemory(const std::string& tflitePath, std::int64_t input_bytes, int input_zero_point,
                                           std::int64_t ours_peak_sram_bytes, std::int64_t ours_flash_bytes,
                                           const JobControl& job = {});

}  // namespace tinyscope
