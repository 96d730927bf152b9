#pragma once
// The JSON card saved beside a predictor's weights: which space it was made for (name and a
// fingerprint of the space's structure), encoder size, base accuracy, recipe, the data used and
// the validation metrics per epoch. Torch-free, so the GUI and CLI can read it without LibTorch.
#include "io/CpuInfo.h"
#include "predict/PredictionMetrics.h"
#include "predict/PredictorRecipe.h"
#include "space/ArchEncoder.h"
#include "space/DesignSpace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct EpochRecord {
    int epoch = 0;               // 1-based
    double train_loss = 0;       // mean L1 over the epoch's batches, accuracy points
    PredictionMetrics validation;
    double seconds = 0;          // since training started
};

struct PredictorCard {
    static constexpr const char* kFormat = "tinyscope-accuracy-predictor";
    int format_version = 1;
    std::string space_name;
    std::string space_fingerprint;
    int encoder_dims = 0;
    std::vector<int> hidden{400, 400, 400};
    double base_accuracy = 0;    // fraction (the lab's base_acc = mean label)
    PredictorRecipe recipe;
    std::string data_origin;     // the dataset path as given
    std::size_t data_pairs = 0, train_pairs = 0, validation_pairs = 0;
    std::vector<int> unseen_features;   // encoder positions never 1 in the training data
    PredictionMetrics validation;       // after the last epoch (the ensemble's, if any)
    std::vector<EpochRecord> history;   // of the first ensemble member
    double training_seconds = 0;
    double validation_seconds = 0;      // of which the per-epoch validation
    std::string weights_file;           // file name of the weights, beside the card
    std::int64_t weights_bytes = 0;
    std::uint32_t weights_crc32 = 0;
    std::string created_by = "tinyscope";
    CpuInfo cpu;                        // where it was trained (absent in cards written before: model empty)
};

// Stable hash of what the encoder and the networks depend on (resolutions, widths, kernel / expand /
// depth lists, stages, classes) — not of names or descriptions. 16 hex digits.
std::string spaceFingerprint(const DesignSpace& space);

// What an encoder position means: "image_size=160", "wid=2", "ks[3]=7", "e[19]=6".
std::string featureName(const ArchEncoder& encoder, int position);

Json toJson(const PredictorCard& card);
PredictorCard predictorCardFromJson(const Json& j, const std::string& source);

// InputError unless the card was made for `space` (same fingerprint and encoder size); the
// message names both spaces.
void requireCardMatchesSpace(const PredictorCard& card, const DesignSpace& space, const std::string& source);

}  // namespace tinyscope
