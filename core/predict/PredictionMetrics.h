#pragma once
// How well predicted accuracies match measured ones: MAE and RMSE in accuracy points, Pearson r
// and Kendall's τ-b (O(n log n), Knight's algorithm; equals scipy.stats.kendalltau with ties).
#include "io/JsonFile.h"

#include <cstddef>
#include <vector>

namespace tinyscope {

struct PredictionMetrics {
    std::size_t count = 0;
    double mae = 0;       // mean |predicted − measured|, accuracy points (percent)
    double rmse = 0;      // accuracy points
    double pearson = 0;
    double kendall_tau = 0;
};

// Both in percent, same length (InputError otherwise).
PredictionMetrics measurePredictions(const std::vector<double>& predicted, const std::vector<double>& measured);

double pearsonR(const std::vector<double>& x, const std::vector<double>& y);
double kendallTau(const std::vector<double>& x, const std::vector<double>& y);

Json toJson(const PredictionMetrics& m);
PredictionMetrics predictionMetricsFromJson(const JsonPath& p);

}  // namespace tinyscope
