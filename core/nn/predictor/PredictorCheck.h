#pragma once
// A predictor checked against measurements: the same subnets predicted and measured on a supernet
// (usually fresh draws the predictor never saw, measured on the test set rather than on the
// holdout images its labels came from). Rankings are what a search relies on, so τ-b and Pearson
// r come first; MAE is given as is and after removing the mean offset between the two (labels
// measured on other images sit a constant amount higher or lower).
// Configs of another space of the family are transferred to the supernet's (transferConfig).
#include "nn/accuracy/SupernetAccuracyOracle.h"
#include "predict/PredictionMetrics.h"

#include <vector>

namespace tinyscope {

struct PredictorCheck {
    std::vector<SubnetConfig> configs;            // in the predictor's space
    std::vector<SubnetConfig> measured_configs;   // in the supernet's space
    std::vector<double> predicted, measured;      // percent
    PredictionMetrics metrics;                    // predicted vs measured
    double mean_offset = 0;                       // mean(predicted) − mean(measured), points
    double mae_after_offset = 0;                  // mean |predicted − offset − measured|
    bool transferred = false;
    std::string predicted_by, measured_by;

    Json toJson() const;
};

// Needs at least 3 configs (InputError otherwise); CancelledError when the measurer's job is cancelled.
PredictorCheck checkPredictor(const std::vector<SubnetConfig>& configs, const DesignSpace& predictorSpace,
                              AccuracyOracle& predictor, SupernetAccuracyOracle& measurer);

}  // namespace tinyscope
