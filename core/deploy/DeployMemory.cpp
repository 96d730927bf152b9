#include "deploy/DeployMemory.h"

#include "Error.h"
#include "io/Text.h"

#include <filesystem>
#include <system_error>

namespace tinyscope {

namespace {

std::string signedBytes(std::int64_t d) { return (d >= 0 ? "+" : "−") + bytesText(d >= 0 ? d : -d); }

std::string liveSetText(const TflmRunReport& t)
{
    std::string s;
    for (const auto& b : t.live_at_peak) s += (s.empty() ? "" : " + ") + b.name + " " + groupThousands(b.bytes);
    return s;
}

}  // namespace

std::vector<EngineMemoryRow> DeployMemoryComparison::rows() const
{
    std::vector<EngineMemoryRow> out;
    const std::int64_t ours = ours_peak_sram_bytes;
    out.push_back({"Tinyscope", "peak SRAM (int8 activations)", ours,
                   "MCUNet's rule: the largest input + output of one layer, a depthwise conv in place; activations only", true});
    if (!tinyengine) {
        out.push_back({"TinyEngine", "scheduled activation arena", std::nullopt, "not run: " + tinyengine_unavailable});
    } else if (!tinyengine->accepted) {
        out.push_back({"TinyEngine", "scheduled activation arena", std::nullopt, "its TFLite code generator refuses the model: " + tinyengine->refusal});
    } else {
        const std::int64_t a = tinyengine->activation_bytes;
        out.push_back({"TinyEngine", "scheduled activation arena", a,
                       a == ours ? "equal to ours: the same lifetimes and in-place depthwise"
                                 : signedBytes(a - ours) + " against ours: its scheduler's placement of the buffers"});
        out.push_back({"TinyEngine", "PEAK_MEM (genModel.h)", tinyengine->peak_bytes,
                       "the arena + im2col and kernel buffers (sbuf, kbuf) " + bytesText(tinyengine->peak_bytes - a), true});
    }
    if (!tflm) {
        out.push_back({"TFLM", "arena_used_bytes()", std::nullopt, "not run: " + tflm_unavailable});
        return out;
    }
    const TflmRunReport& t = *tflm;
    std::string head = "the largest live set " + bytesText(t.live_peak_bytes) + " (" + signedBytes(t.live_peak_bytes - ours) +
                       " against ours), during op " + std::to_string(t.live_peak_op) + " " + t.live_peak_op_type + ": " + liveSetText(t) + "; ";
    if (t.live_peak_op_type == "PAD")
        head += "a PAD op holds its input and the padded copy at once (TFLite has only SAME/VALID padding, so PyTorch's "
                "padding of a strided conv is written as PAD + VALID conv); ours pads inside the conv";
    else if (t.live_peak_op_type == "DEPTHWISE_CONV_2D")
        head += "TFLM keeps a depthwise conv's input and output apart, ours runs it in place";
    else
        head += "TFLM gives every op's output its own buffer (no op in place)";
    if (t.head_bytes > t.live_peak_bytes) head += "; the greedy placement adds " + bytesText(t.head_bytes - t.live_peak_bytes);
    else head += "; the greedy placement reaches that set exactly";
    out.push_back({"TFLM", "head: planned activations + scratch", t.head_bytes, head});
    std::string tail = "persistent records, not activations:";
    auto part = [&](const char* key, const char* what) {
        if (t.breakdown.contains(key) && t.breakdown[key].value("bytes", 0) > 0)
            tail += std::string(" ") + what + " " + groupThousands(t.breakdown[key].value("bytes", 0)) + ",";
    };
    part("persistent_buffers", "op data with per-channel multipliers/shifts");
    part("eval_tensors", "eval tensors");
    part("nodes_and_registrations", "nodes");
    part("quantization_data", "quantization");
    part("persistent_tflite_tensors", "input/output tensors");
    tail += " allocator objects";
    out.push_back({"TFLM", "tail: persistent", t.tail_bytes, tail});
    std::string used = "head + tail (" + signedBytes(t.arena_used_bytes - ours) + " against ours)";
    if (t.min_arena_bytes > t.arena_used_bytes)
        used += "; the least arena AllocateTensors accepts is " + bytesText(t.min_arena_bytes) + " (the planner's working lists)";
    out.push_back({"TFLM", "arena_used_bytes()", t.arena_used_bytes, used, true});
    return out;
}

Json DeployMemoryComparison::toJson() const
{
    Json j;
    j["ours"] = {{"peak_sram_bytes", ours_peak_sram_bytes}, {"flash_bytes", ours_flash_bytes}};
    j["file_bytes"] = file_bytes;
    if (tinyengine)
        j["tinyengine"] = {{"accepted", tinyengine->accepted}, {"refusal", tinyengine->refusal},
                           {"activation_bytes", tinyengine->activation_bytes}, {"peak_bytes", tinyengine->peak_bytes},
                           {"model_bytes", tinyengine->model_bytes}};
    else
        j["tinyengine"] = {{"unavailable", tinyengine_unavailable}};
    if (tflm) {
        Json live = Json::array();
        for (const auto& b : tflm->live_at_peak) live.push_back({{"name", b.name}, {"bytes", b.bytes}, {"first_op", b.first_op}, {"last_op", b.last_op}});
        j["tflm"] = {{"arena_used_bytes", tflm->arena_used_bytes}, {"min_arena_bytes", tflm->min_arena_bytes},
                     {"head_bytes", tflm->head_bytes},           {"tail_bytes", tflm->tail_bytes},
                     {"live_peak_bytes", tflm->live_peak_bytes}, {"live_peak_op", tflm->live_peak_op},
                     {"live_peak_op_type", tflm->live_peak_op_type}, {"live_at_peak", live},
                     {"live_bytes_per_op", tflm->live_bytes_per_op}, {"pad_ops", tflm->pad_ops}};
    } else {
        j["tflm"] = {{"unavailable", tflm_unavailable}};
    }
    Json rows = Json::array();
    for (const auto& r : this->rows())
        rows.push_back({{"engine", r.engine}, {"figure", r.figure}, {"bytes", r.bytes ? Json(*r.bytes) : Json()}, {"why", r.why}, {"total", r.total}});
    j["rows"] = rows;
    return j;
}

DeployMemoryComparison compareDeployMemory(const std::string& tflitePath, std::int64_t input_bytes, int input_zero_point,
                                           std::int64_t ours_peak_sram_bytes, std::int64_t ours_flash_bytes, const JobControl& job)
{
    DeployMemoryComparison c;
    c.ours_peak_sram_bytes = ours_peak_sram_bytes;
    c.ours_flash_bytes = ours_flash_bytes;
    std::error_code sizeError;
    const auto fileSize = std::filesystem::file_size(tflitePath, sizeError);
    c.file_bytes = sizeError ? 0 : static_cast<std::int64_t>(fileSize);
    job.report(0, 2, "TensorFlow Lite Micro");
    if (std::string missing = tflmRunMissing(); !missing.empty()) {
        c.tflm_unavailable = missing;
    } else {
        const std::vector<std::int8_t> input(static_cast<std::size_t>(input_bytes), static_cast<std::int8_t>(input_zero_point));
        // An arena with room to spare: TFLM's head is a few times our peak at most (PAD copies, no
        // in-place op) and its tail grows with the per-channel op data, which the flash figure bounds.
        // A multiple of 64 KiB: TFLM aligns the tail's start down from the arena's end, so an arena
        // size that is not a multiple of 16 would add its remainder to arena_used_bytes.
        const std::int64_t need = (std::int64_t(2) << 20) + 4 * ours_peak_sram_bytes + ours_flash_bytes / 2;
        const std::int64_t arena = (need + 65535) / 65536 * 65536;
        c.tflm = runTflm(tflitePath, input, 1, arena, job);
    }
    job.check();
    job.report(1, 2, "TinyEngine's TFLite code generator");
    if (const std::string pkg = missingTinyEngineTflitePackage(); !pkg.empty())
        c.tinyengine_unavailable = "needs the Debian package " + pkg;
    else if (tinyEngineRoot().empty())
        c.tinyengine_unavailable = "TinyEngine's sources (../shared/reference/runtimes/tinyengine) were not found (set TINYSCOPE_SHARED)";
    else
        c.tinyengine = runTinyEngineTfliteCodegen(tflitePath, job);
    job.report(2, 2, "done");
    return c;
}

}  // namespace tinyscope
