#pragma once
// Does an export fit the chosen board? The SRAM and flash the workbench computes for it, checked
// against a BoardProfile, as checker findings (rules board-sram, board-flash, board-dsp,
// board-fpu; docs/TINYENGINE_EXPORT.md). The real binary's figures come from `tinyscope
// device-run` (docs/DEVICE_RUNNER.md); these are the workbench's, with margins learned there.
// Torch-free.
#include "tinyengine/BoardProfile.h"
#include "tinyengine/ExportChecker.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/TinyEngineExport.h"

#include <cstdint>
#include <vector>

namespace tinyscope {

struct BoardUse {
    std::int64_t sram_bytes = 0;    // the memory ledger's training peak (with reordering) in the form's autodiff mode
    std::int64_t flash_bytes = 0;   // the bytes of every array of the params pickle (weights, biases, scales, QAS factors)
    Json toJson() const { return {{"sram_bytes", sram_bytes}, {"flash_bytes", flash_bytes}}; }
};

// What the generated code needs beyond the workbench's figures, measured on the emulated M7 for
// the 11 published schemes that compile (docs/DEVICE_RUNNER.md): the training step's stack (its QAS
// arrays are locals) and runtime data put the binary's SRAM 54.5-74.3 KB above the memory ledger's
// peak (MIT's 49kb: ledger 195,944 B, binary 255,104 B); code, kernels and generated tables put its
// flash 165-253 KB above the parameters.
constexpr std::int64_t kBoardSramMargin = 80 * 1024;
constexpr std::int64_t kBoardFlashMargin = 256 * 1024;

BoardUse boardUse(const ExportPlan& plan);
// The flash figure of an export of `net` with post-training-quantized parameters, without
// quantizing: per conv an int8 weight, int32 bias and float scale per output channel and two
// int8 zero points; per add six scalars (PostTrainingQuantizer.cpp). Equal to boardUse(plan)'s.
std::int64_t quantizedParameterBytes(const Network& net);
// The same figures for an export read back (the recovered network and scheme, the graph's autodiff
// mode, the params pickle's arrays); flash 0 without params.
BoardUse boardUse(const ImportedGraph& im);
std::vector<Finding> checkBoardFit(const BoardProfile& board, const BoardUse& use);

}  // namespace tinyscope
