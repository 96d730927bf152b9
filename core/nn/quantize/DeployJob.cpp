#include "nn/quantize/DeployJob.h"

#include "deploy/TfliteExport.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "data/Image.h"
#include "io/OutputPaths.h"
#include "nn/quantize/PostTrainingQuantizer.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace tinyscope {

namespace {

std::vector<float> floats(const at::Tensor& t)
{
    const at::Tensor c = t.detach().to(at::kFloat).contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}


Json floatsJson(const float (&v)[3]) { return Json::array({v[0], v[1], v[2]}); }

// What every format's result shares: the request's file, the model and the workbench's figures.
DeployResult resultOf(DeployFormat format, const DeployRequest& rq, const PreparedModel& m)
{
    DeployResult r;
    r.format = format;
    r.out = rq.out;
    r.model = m.network.name;
    r.description = m.description;
    r.cost = deployCost(m);
    r.batchnorm = m.batchNorm();
    return r;
}

DeployResult deployOnnx(const DeployRequest& rq, const JobControl& job)
{
    requireWritableFile(rq.out, "--out");   // before any work
    if (rq.int8) throw InputError("--int8 with --format onnx: the ONNX export is float32 only (QDQ int8 is not written yet); drop --int8");
    const PreparedModel m = prepareFloatModel(rq.model, rq.quantize, job);
    if (!m.float_model)
        throw InputError(rq.model.asZoo()->params_file + ": the float model needs the scales (scale.json beside the params pickle, or --scales FILE)");
    job.check();
    const OnnxSource src = onnxSource(m);
    const OnnxModel model = buildOnnxModel(src);
    job.check();
    writeOnnxModel(model, rq.out);
    DeployResult r = resultOf(DeployFormat::Onnx, rq, m);
    r.bytes = model.bytes.size();
    r.ops = model.ops;
    r.input = {model.input_name, model.input_shape, "float32", std::nullopt, std::nullopt};
    r.output = {model.output_name, model.output_shape, "float32", std::nullopt, std::nullopt};
    r.metadata = src.metadata;
    return r;
}

// TFLite is int8 only: the model quantized as `quantize` / `export` do (activation ranges from
// --calib-images of --calib-data; a zoo model with an int8 params pickle as it is), then written by
// deploy/TfliteExport. --int8 is implied.
DeployResult deployTflite(const DeployRequest& rq, const JobControl& job)
{
    requireWritableFile(rq.out, "--out");   // before any work
    const PreparedModel m = prepareModel(rq.model, rq.quantize, job);
    if (const std::string why = tfliteObstacle(m.network); !why.empty()) throw InputError(why + "; nothing written");
    job.check();
    TfliteMetadata meta;
    meta.labels = deployLabels(m);
    meta.config = m.subnet ? m.subnet->toJson() : Json(nullptr);
    meta.description = m.description + " — int8; written by tinyscope deploy";
    if (m.subnet) {
        meta.extra["design_space"] = m.space->name;
        meta.extra["batchnorm"] = m.batchNorm();
    }
    const TfliteModel t = writeTflite(rq.out, m.network, m.params, meta);
    auto tensor = [](const char* name, const TfliteTensorInfo& i) {
        return DeployTensor{name, std::vector<std::int64_t>(i.shape.begin(), i.shape.end()), "int8", i.scale, i.zero_point};
    };
    DeployResult r = resultOf(DeployFormat::TFLite, rq, m);
    r.bytes = t.bytes.size();
    r.ops = t.ops;
    r.input = tensor("input", t.input);
    r.output = tensor("output", t.output);
    r.metadata = deployMetadata(m);
    return r;
}

}  // namespace

DeployFormat parseDeployFormat(const std::string& name)
{
    if (name == "onnx") return DeployFormat::Onnx;
    if (name == "tflite") return DeployFormat::TFLite;
    throw InputError("--format: '" + name + "' is not a deploy format (tflite, onnx)");
}

const char* deployFormatName(DeployFormat f) { return f == DeployFormat::Onnx ? "onnx" : "tflite"; }

Json DeployTensor::toJson() const
{
    return {{"name", name},
            {"shape", shape},
            {"type", type},
            {"scale", scale ? Json(*scale) : Json(nullptr)},
            {"zero_point", zero_point ? Json(*zero_point) : Json(nullptr)}};
}

Json DeployResult::toJson() const
{
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    return {{"format", deployFormatName(format)},
            {"out", out},
            {"bytes", bytes},
            {"ops", ops},
            {"input", input.toJson()},
            {"output", output.toJson()},
            {"model", model},
            {"description", description},
            {"cost", {{"macs", cost.macs}, {"peak_sram_bytes", cost.peak_sram_bytes}, {"flash_bytes", cost.flash_bytes}, {"source", cost.source}}},
            {"batchnorm", batchnorm.empty() ? Json(nullptr) : Json(batchnorm)},
            {"metadata", meta}};
}

DeployCost deployCost(const PreparedModel& m)
{
    DeployCost c;
    if (m.subnet) {
        const CostSummary sum = CostModel::summary(narrowedLayout(*m.space, *m.subnet, m.channels, m.description));   // narrowed when channels were pruned
        c.macs = sum.macs;
        c.peak_sram_bytes = sum.peak_activation_bytes;
        c.flash_bytes = sum.flash_bytes;
        c.source = "cost model";
        return c;
    }
    c.macs = m.network.macs();
    c.peak_sram_bytes = m.network.peakActivationBytes();
    for (int ci = 0; ci < m.network.numConvs(); ++ci) {   // int8 weights + int32 biases, as CostSummary::flash_bytes
        const Layer& l = m.network.conv(ci);
        c.flash_bytes += l.weightElems() + 4 * static_cast<std::int64_t>(l.cout);
    }
    c.source = "network table";
    return c;
}

std::vector<std::string> deployLabels(const PreparedModel& m)
{
    std::vector<std::string> labels;
    if (m.space) labels = m.space->class_names;
    if (static_cast<int>(labels.size()) != m.network.num_outputs) {
        labels.clear();
        for (int k = 0; k < m.network.num_outputs; ++k) labels.push_back(std::to_string(k));
    }
    return labels;
}

std::vector<std::pair<std::string, std::string>> deployMetadata(const PreparedModel& m)
{
    const Network& net = m.network;
    const Normalization norm;
    const std::vector<std::string> labels = deployLabels(m);
    const DeployCost c = deployCost(m);
    const bool image = net.input.c == 3;
    std::vector<std::pair<std::string, std::string>> md{
        {"model", net.name},
        {"description", m.description},
        {"input_shape", Json::array({1, net.input.c, net.input.h, net.input.w}).dump()},
        {"input_size", std::to_string(net.input.h) + "x" + std::to_string(net.input.w)},
        {"layout", "NCHW"},
        // The workbench's image pipeline (data/Image.h); models without a 3-channel input (keyword
        // spotting features, the autoencoder) take their own features, unnormalised here.
        {"channel_order", image ? "RGB" : "none (not an image input)"},
        {"normalization", image ? "(pixel / 255 - mean) / std per channel; grey images replicated to 3 channels" : "none"},
        {"mean", image ? floatsJson(norm.mean).dump() : "null"},
        {"std", image ? floatsJson(norm.std).dump() : "null"},
        {"class_labels", Json(labels).dump()},
        {"subnet_config", m.subnet ? m.subnet->toJson().dump() : "null"},
        // A channel-pruned subnet's kept channels per group (space/ChannelWidths.h); {} when none were pruned.
        {"channel_widths", m.subnet ? Json(m.channels).dump() : "null"},
        {"design_space", m.space ? m.space->name : ""},
        // A subnet's BatchNorm statistics, folded into the convs: re-calibrated on which images, or the checkpoint's.
        {"batchnorm", m.batchNorm()},
        {"macs", std::to_string(c.macs)},
        {"peak_sram_bytes", std::to_string(c.peak_sram_bytes)},
        {"flash_bytes", std::to_string(c.flash_bytes)},
        {"cost_source", c.source == "cost model" ? "tinyscope cost (MACs with the lab's 4x BN term, int8 peak activation, int8 weights + int32 biases)"
                                                 : "tinyscope zoo table (conv MACs, int8 peak activation, int8 weights + int32 biases)"},
    };
    return md;
}

OnnxSource onnxSource(const PreparedModel& m)
{
    if (!m.float_model) throw InputError(m.description + ": no float model to export");
    const FloatModel& f = *m.float_model;
    OnnxSource s;
    s.network = f.net;
    s.weight.resize(f.net.layers.size());
    s.bias.resize(f.net.layers.size());
    for (std::size_t i = 0; i < f.net.layers.size(); ++i) {
        if (i < f.weight.size() && f.weight[i].defined()) s.weight[i] = floats(f.weight[i]);
        if (i < f.bias.size() && f.bias[i].defined()) s.bias[i] = floats(f.bias[i]);
    }
    s.metadata = deployMetadata(m);
    s.doc = m.description + " — float32, BatchNorm folded; written by tinyscope deploy";
    return s;
}

// The one place that picks the writer of a format.
DeployResult deployModel(const DeployRequest& rq, const JobControl& job)
{
    if (rq.out.empty()) throw InputError("give the output file: --out FILE");
    switch (rq.format) {
    case DeployFormat::Onnx: return deployOnnx(rq, job);
    case DeployFormat::TFLite: return deployTflite(rq, job);
    }
    throw InputError("unknown deploy format");
}

DeployMemoryComparison compareDeployMemory(const DeployResult& r, const JobControl& job)
{
    if (r.format != DeployFormat::TFLite) throw InputError("the memory comparison runs an int8 TFLite file; " + r.out + " is not one");
    std::int64_t inputBytes = 1;
    for (const auto d : r.input.shape) inputBytes *= d;
    return compareDeployMemory(r.out, inputBytes, r.input.zero_point.value_or(0), r.cost.peak_sram_bytes, r.cost.flash_bytes, job);
}

}  // namespace tinyscope
