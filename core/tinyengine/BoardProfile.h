#pragma once
// A microcontroller board an export is meant for: SRAM and flash, the core, whether it has the DSP
// extension (TinyEngine's kernels are written with its SIMD intrinsics: __SMLAD, __SXTB16) and an
// FPU (the training kernels compute gradients in float). Presets are models/boards/*.json,
// compiled in; a user file with the same keys works too. Torch-free.
#include "io/JsonFile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

// Bounds of a board's texts, which messages and fit lines print (docs/INPUT_LIMITS.md).
constexpr std::size_t kMaxBoardNameChars = 64;     // printable ASCII
constexpr std::size_t kMaxBoardTitleBytes = 200;   // UTF-8 without control characters

struct BoardProfile {
    std::string name;            // "stm32f746"
    std::string title;           // a line for people
    std::string core;            // "cortex-m7", "cortex-m4", ...
    std::int64_t sram_bytes = 0;
    std::int64_t flash_bytes = 0;
    bool dsp = true;
    std::string fpu = "single";  // "none", "single", "double"

    // Keys: name, core, sram_bytes, flash_bytes, dsp, fpu, optional title. Throws InputError
    // naming the file and the key (a name beyond kMaxBoardNameChars or with a control character,
    // a title beyond kMaxBoardTitleBytes or with one, a core not "cortex-m…").
    static BoardProfile fromJson(const Json& j, const std::string& source);
    Json toJson() const;
};

std::vector<std::string> presetBoardNames();                  // sorted: nrf52840, stm32f411, ...
BoardProfile presetBoard(const std::string& name);            // throws InputError listing the presets
// A preset name, or a path to a board JSON file (anything with '/' or ending in .json).
BoardProfile loadBoard(const std::string& nameOrPath);

}  // namespace tinyscope
