#include "search/SramRuntime.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "deploy/TflmArena.h"
#include "io/Text.h"
#include "search/NetworkMemo.h"
#include "zoo/SubnetNetwork.h"

namespace tinyscope {

namespace {

// The device TFLM runs on: 32-bit Cortex-M7, CMSIS-NN kernels (the emulated board's build).
TflmTarget deviceTarget() { return TflmTarget::cortexM7(); }

struct TflmFigure {
    std::int64_t arena = 0, head = 0, tail = 0;
};

struct TflmMemo {
    DesignSpace space;
    NetworkMemo<TflmFigure> figures{200000};

    TflmFigure figure(const SubnetConfig& c) const
    {
        return figures.get(space, c, [&] {
            const TflmArenaPrediction p = predictTflmArena(networkFromSubnet(space, c, "subnet"), deviceTarget());
            return TflmFigure{p.arena_used_bytes, p.head_bytes, p.tail_bytes};
        });
    }
};

}  // namespace

const char* sramRuntimeName(SramRuntime r) { return r == SramRuntime::Tflm ? "tflm" : "tinyengine"; }

SramRuntime sramRuntimeFromName(const std::string& name, const std::string& where)
{
    if (name == "tinyengine") return SramRuntime::TinyEngine;
    if (name == "tflm") return SramRuntime::Tflm;
    throw InputError(where + ": expected tinyengine or tflm, got '" + escapedForMessage(name) + "'");
}

Json SramFigure::toJson() const
{
    Json j{{"runtime", sramRuntimeName(runtime)}, {"bytes", bytes}, {"what", what}};
    for (auto it = parts.begin(); it != parts.end(); ++it) j[it.key()] = it.value();
    return j;
}

SramFigure sramFigure(const DesignSpace& space, const SubnetConfig& config, SramRuntime runtime)
{
    SramFigure f;
    f.runtime = runtime;
    if (runtime == SramRuntime::TinyEngine) {
        f.bytes = CostModel(space).summary(config).peak_activation_bytes;
        f.what = "peak SRAM (MCUNet's rule = TinyEngine's scheduled arena)";
        return f;
    }
    const TflmArenaPrediction p = predictTflmArena(networkFromSubnet(space, config, "subnet"), deviceTarget());
    f.bytes = p.arena_used_bytes;
    f.what = "TFLM arena (" + p.target.describe() + ", predicted)";
    f.parts = Json{{"head_bytes", p.head_bytes}, {"tail_bytes", p.tail_bytes}, {"target", p.target.toJson()}};
    return f;
}

std::shared_ptr<const ConstraintQuantity> sramQuantity(const DesignSpace& space, SramRuntime runtime)
{
    if (runtime == SramRuntime::TinyEngine) return Constraints::builtinQuantity("KBPeakMemory");
    auto memo = std::make_shared<TflmMemo>();
    memo->space = space;
    auto q = std::make_shared<ConstraintQuantity>();
    q->key = kTflmArenaKey;
    q->label = "TFLM arena";
    q->unit = "KB";
    q->measure = [memo](const SubnetConfig& c, const CostSummary&) { return static_cast<double>(memo->figure(c).arena) / 1024.0; };
    q->monotone_in_blocks = true;   // see the header
    q->definition = Json{{"runtime", "tflm"}, {"target", deviceTarget().toJson()}};
    q->explain = [memo](const SubnetConfig& c) {
        const TflmFigure f = memo->figure(c);
        return "head " + bytesText(f.head) + " + tail " + bytesText(f.tail) + " on " + deviceTarget().describe();
    };
    q->report_key = "sram_figure";
    q->report = [space](const SubnetConfig& c, double limit) {
        Json j = sramFigure(space, c, SramRuntime::Tflm).toJson();
        j["limit_kb"] = limit;
        return j;
    };
    return q;
}

void setSramRuntime(Constraints& constraints, const DesignSpace& space, SramRuntime runtime)
{
    const Limit* l = constraints.find("KBPeakMemory");
    if (!l) l = constraints.find(kTflmArenaKey);
    if (!l || sramRuntimeOf(constraints) == runtime) return;   // none, or already runtime's
    const double max = l->max;
    constraints.remove("KBPeakMemory");
    constraints.remove(kTflmArenaKey);
    constraints.set(sramQuantity(space, runtime), max);
}

SramRuntime sramRuntimeOf(const Constraints& constraints)
{
    return constraints.find(kTflmArenaKey) ? SramRuntime::Tflm : SramRuntime::TinyEngine;
}

}  // namespace tinyscope
