#pragma once
// Quantization and export as calls with a torch-free interface, for the CLI and the GUI (which
// runs them on a worker thread): pick a model (a zoo model with int8 weights from a params
// pickle, a zoo model with seeded weights, or a subnet of a supernet checkpoint), quantize it on
// calibration images, compare float and int8 top-1 on a dataset, and plan a TinyEngine export.
#include "JobControl.h"
#include "workspace/ModelSource.h"
#include "graph/SparseScheme.h"
#include "tinyengine/TinyEngineExport.h"
#include "space/SubnetConfig.h"
#include "workspace/CalibrationData.h"
#include "zoo/Network.h"

#include <memory>
#include <optional>
#include <string>

namespace tinyscope {

struct FloatModel;

// The zoo models' calibration data (their seeded weights have no task of their own).
constexpr const char* kZooCalibrationData = "fashion-mnist:holdout";

struct QuantizeOptions {
    // The images of the int8 activation ranges and of a subnet's BatchNorm re-calibration. "": the
    // model's own — a subnet's space's (workspace/CalibrationData.h; refused when the space has
    // none), kZooCalibrationData for a zoo model. A subnet's data must be of its space's task.
    std::string calib_data;
    std::size_t calib_images = 200;
    std::size_t bn_images = 2000;          // supernet subnets: BN re-calibration images; 0 keeps the checkpoint's statistics
    int threads = 2;
    CalibrationWords words;                // how a refusal names the options (the CLI's flags, the GUI's fields)
};

struct PreparedModel {
    Network network;
    QuantizedParams params;                // int8 parameters under the graph's names + scale.json scales
    std::string description;
    bool from_pickle = false;              // the int8 weights were read, not quantized here
    std::size_t calib_images = 0;
    std::shared_ptr<const FloatModel> float_model;   // null when the float model is unknown (pickle without scales)
    std::optional<SubnetConfig> subnet;    // the config of a supernet subnet …
    std::optional<DesignSpace> space;      // … and its design space
    ChannelWidths channels;                // a channel-pruned subnet's kept widths (empty: the config's)
    std::string calib_data;                // the calibration data read ("" when none was)
    std::size_t bn_images = 0;             // a subnet's BatchNorm re-calibration images (0: the checkpoint's statistics)
    // A subnet's BatchNorm: "re-calibrated on 2,000 images of fashion-mnist:holdout" or "the
    // checkpoint's statistics"; "" for a zoo model (its own).
    std::string batchNorm() const;
};

// A subnet's calibration data is chosen and checked (CalibrationData.h) before the supernet is loaded.
PreparedModel prepareModel(const ModelSource& source, const QuantizeOptions& options, const JobControl& job = {});
// The float model only, no int8 parameters (except a zoo model's params pickle, read as it is):
// a supernet subnet is BN re-calibrated on options.calib_data as prepareModel does (bn_images 0:
// the checkpoint's statistics, and no calibration data is needed); a zoo model
// without params is seeded (any layer kind; the reader of the float model refuses what it
// cannot express).
PreparedModel prepareFloatModel(const ModelSource& source, const QuantizeOptions& options, const JobControl& job = {});

struct QuantizeReport {
    std::string model, description, data;
    int resolution = 0;
    std::size_t images = 0, calib_images = 0;
    bool has_float = false;
    double float_top1 = 0, int8_top1 = 0;  // percent
    double agreement = 0;                  // percent of images where both predict the same class
    double float_seconds = 0, int8_seconds = 0;   // forward time over the images (same run)
    bool from_pickle = false;
    Json toJson() const;
};

// Float and int8 top-1 on the first `images` items of `data` (0: all).
QuantizeReport compareTop1(const PreparedModel& m, const std::string& data, std::size_t images, int threads = 2,
                           const JobControl& job = {});

struct ExportRequest {
    ModelSource model;
    QuantizeOptions quantize;
    SparseScheme scheme;                   // loadScheme (PublishedSchemes.h) at the edge, or the GUI's choice
    std::string scheme_label;              // the scheme for people: its name or file, or the GUI's words
    ExportForm form = ExportForm::Reference;
    std::string name;                      // file stem (a plain file name, else InputError); default: the model name
};

// prepareModel + planExport: the graph, params, scales and findings, nothing written yet.
ExportPlan planModelExport(const ExportRequest& request, const JobControl& job = {});

}  // namespace tinyscope
