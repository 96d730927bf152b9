#pragma once
// Which runtime a search's SRAM limit is for. The search bounds one memory figure per subnet; the
// runtime decides which:
//   tinyengine  our peak SRAM (MCUNet's rule, = TinyEngine's scheduled arena): the built-in
//               KBPeakMemory quantity, the default and the lab's figure;
//   tflm        the arena TensorFlow Lite Micro needs on the Cortex-M7 with CMSIS-NN kernels
//               (arena_used_bytes(): planned activations + scratch + its persistent records),
//               predicted exactly from the subnet's network (deploy/TflmArena.h) — about twice
//               ours, because of the padded copies PAD ops keep and TFLM's bookkeeping.
// The search sees a ConstraintQuantity like any other (measure, explain, report); only this file
// knows where the TFLM figure comes from. Memoised per network (thread-safe).
#include "io/JsonFile.h"
#include "search/Constraints.h"
#include "space/DesignSpace.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tinyscope {

enum class SramRuntime { TinyEngine, Tflm };

const char* sramRuntimeName(SramRuntime r);   // "tinyengine", "tflm"
// InputError naming `where` and the choices for anything else.
SramRuntime sramRuntimeFromName(const std::string& name, const std::string& where);

// One subnet's SRAM figure under a runtime: bytes, what they are, and the parts (TFLM: head, tail, target).
struct SramFigure {
    SramRuntime runtime = SramRuntime::TinyEngine;
    std::int64_t bytes = 0;
    std::string what;   // "peak SRAM (MCUNet's rule = TinyEngine's arena)", "TFLM arena (32-bit Cortex-M7, CMSIS-NN kernels)"
    Json parts = Json::object();
    Json toJson() const;   // {runtime, bytes, what, ...parts}
};
SramFigure sramFigure(const DesignSpace& space, const SubnetConfig& config, SramRuntime runtime);

// The quantity an SRAM limit bounds under `runtime`: KBPeakMemory for tinyengine, KBTflmArena ("TFLM
// arena", KB) for tflm. Block-monotone: a larger kernel or expand ratio never shrinks a tensor, a
// scratch buffer or a persistent record (the greedy layout is checked on random subnets by
// test_tflm_arena, not proven).
std::shared_ptr<const ConstraintQuantity> sramQuantity(const DesignSpace& space, SramRuntime runtime);
constexpr const char* kTflmArenaKey = "KBTflmArena";

// The limits with their SRAM limit (KBPeakMemory or KBTflmArena, whichever is set) bounding `runtime`'s
// figure, at the same number of KB.
void setSramRuntime(Constraints& constraints, const DesignSpace& space, SramRuntime runtime);
// The runtime a set of limits bounds SRAM for (tflm when KBTflmArena is among them).
SramRuntime sramRuntimeOf(const Constraints& constraints);

}  // namespace tinyscope
