#pragma once
// tinyscope deploy as a call with a torch-free interface (CLI; the GUI's Deploy dialog later):
// pick a model as quantize/export do (ModelSource), then write it in an inference format. ONNX:
// the float model (BN folded) through deploy/OnnxExport; TFLite: the int8 model (quantized as
// `quantize` does) through deploy/TfliteExport.
// docs/DEPLOY.md.
#include "JobControl.h"
#include "deploy/DeployMemory.h"
#include "deploy/OnnxExport.h"
#include "io/JsonFile.h"
#include "nn/quantize/QuantizationJob.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

enum class DeployFormat { TFLite, Onnx };
DeployFormat parseDeployFormat(const std::string& name);   // "tflite" | "onnx", else InputError
const char* deployFormatName(DeployFormat f);

struct DeployRequest {
    ModelSource model;
    QuantizeOptions quantize;   // calib_data: BN re-calibration of a subnet (bn_images 0: none) and int8 activation ranges
    DeployFormat format = DeployFormat::Onnx;
    bool int8 = false;
    std::string out;            // the file written (atomically)
};

// An input or output tensor of the written model. A float tensor has no scale and zero point
// (null in JSON); an int8 one has both (real = scale · (q − zero_point)).
struct DeployTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::string type = "float32";
    std::optional<double> scale;
    std::optional<int> zero_point;
    Json toJson() const;
};

// The workbench's figures for the model: MACs, peak SRAM (int8 activations) and flash (int8
// weights + int32 biases), as `tinyscope cost` (subnets) or the zoo table (zoo models) give them.
struct DeployCost {
    std::int64_t macs = 0, peak_sram_bytes = 0, flash_bytes = 0;
    std::string source;   // "cost model" | "network table"
};

struct DeployResult {
    DeployFormat format = DeployFormat::Onnx;
    std::string out, model, description;
    std::uint64_t bytes = 0;
    std::map<std::string, int> ops;
    DeployTensor input, output;
    DeployCost cost;
    std::string batchnorm;     // a subnet's BatchNorm (PreparedModel::batchNorm); "" for a zoo model
    std::vector<std::pair<std::string, std::string>> metadata;
    Json toJson() const;   // format, out, bytes, ops, input, output, model, description, cost, batchnorm (null: zoo), metadata
};

// Prepares the model, builds the file in memory (refusing an inexpressible layer, naming it),
// then writes it atomically. Nothing is written on any error.
DeployResult deployModel(const DeployRequest& request, const JobControl& job = {});

// The written int8 TFLite file of `r` on TFLM and TinyEngine beside our figures (one input of the
// file's zero point; deploy/DeployMemory.h). `tinyscope deploy --compare-memory` and the Deploy dialog.
DeployMemoryComparison compareDeployMemory(const DeployResult& r, const JobControl& job = {});

// The pieces, for the tests and the GUI.
DeployCost deployCost(const PreparedModel& m);
std::vector<std::pair<std::string, std::string>> deployMetadata(const PreparedModel& m);
// The class labels: the design space's class names for a subnet, else "0" … "K-1".
std::vector<std::string> deployLabels(const PreparedModel& m);
// A float model as the ONNX writer's plain arrays (m.float_model must be set).
OnnxSource onnxSource(const PreparedModel& m);

}  // namespace tinyscope
