#include "nn/predictor/PredictorCheck.h"

#include "Error.h"
#include "space/SpaceTransfer.h"

#include <cmath>
#include <numeric>

namespace tinyscope {

PredictorCheck checkPredictor(const std::vector<SubnetConfig>& configs, const DesignSpace& predictorSpace,
                              AccuracyOracle& predictor, SupernetAccuracyOracle& measurer)
{
    if (configs.size() < 3)
        throw InputError("checking a predictor needs at least 3 subnets to rank, got " + std::to_string(configs.size()));
    PredictorCheck c;
    c.configs = configs;
    c.transferred = predictorSpace.name != measurer.space().name;
    for (const SubnetConfig& k : configs) c.measured_configs.push_back(transferConfig(k, predictorSpace, measurer.space()));
    c.predicted = predictor.predict(configs);
    c.predicted_by = predictor.describe();
    c.measured = measurer.predict(c.measured_configs);
    c.measured_by = measurer.describe();
    c.metrics = measurePredictions(c.predicted, c.measured);
    const double n = static_cast<double>(configs.size());
    c.mean_offset = (std::accumulate(c.predicted.begin(), c.predicted.end(), 0.0) -
                     std::accumulate(c.measured.begin(), c.measured.end(), 0.0)) / n;
    for (std::size_t i = 0; i < configs.size(); ++i) c.mae_after_offset += std::fabs(c.predicted[i] - c.mean_offset - c.measured[i]);
    c.mae_after_offset /= n;
    return c;
}

Json PredictorCheck::toJson() const
{
    Json rows = Json::array();
    for (std::size_t i = 0; i < configs.size(); ++i)
        rows.push_back({{"config", configs[i].toJson()},
                        {"measured_config", transferred ? measured_configs[i].toJson() : Json(nullptr)},
                        {"predicted_accuracy", predicted[i]},
                        {"measured_accuracy", measured[i]}});
    Json m = tinyscope::toJson(metrics);
    m["mean_offset"] = mean_offset;
    m["mae_after_offset"] = mae_after_offset;
    return {{"subnets", rows}, {"metrics", m}, {"transferred", transferred}, {"predicted_by", predicted_by}, {"measured_by", measured_by}};
}

}  // namespace tinyscope
