#include "nn/accuracy/SupernetAccuracyOracle.h"

#include "io/Text.h"
#include "predict/PredictionCache.h"

namespace tinyscope {

SupernetAccuracyOracle::SupernetAccuracyOracle(EvaluationRequest settings) : settings_(std::move(settings)) {}

std::vector<double> SupernetAccuracyOracle::predict(const std::vector<SubnetConfig>& configs)
{
    std::vector<double> out;
    out.reserve(configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i) {
        const std::string key = networkKey(settings_.space, configs[i]);
        auto it = results_.find(key);
        if (it == results_.end()) {
            EvaluationRequest rq = settings_;
            rq.config = configs[i];
            JobControl job;
            job.cancel = job_.cancel;
            const std::string prefix = configs.size() > 1 ? "subnet " + std::to_string(i + 1) + "/" + std::to_string(configs.size()) + ": " : "";
            if (job_.progress)
                job.progress = [this, prefix](std::size_t done, std::size_t total, const std::string& stage) {
                    job_.progress(done, total, prefix + stage);
                };
            it = results_.emplace(key, runEvaluation(rq, job)).first;
        }
        out.push_back(it->second.top1);
    }
    return out;
}

std::string SupernetAccuracyOracle::describe() const
{
    // The calibration data as runEvaluation chooses it (workspace/CalibrationData.h).
    const std::string calib = settings_.calib_data.empty() ? ownCalibrationData(settings_.space) : settings_.calib_data;
    std::string d = "measured top-1 on " + (settings_.images ? groupThousands(static_cast<std::int64_t>(settings_.images)) : std::string("all")) +
                    " images of " + settings_.data;
    d += settings_.calibrate ? ", BN re-calibrated on " + groupThousands(static_cast<std::int64_t>(settings_.calibration.images)) +
                                   " images of " + calib
                             : ", BN statistics of the checkpoint";
    if (settings_.int8)
        d += "; int8 as deployed: our PTQ on " + groupThousands(static_cast<std::int64_t>(settings_.int8_calib_images)) + " images of " +
             calib + ", Int8Forward's exact arithmetic";
    return d + "; supernet " + settings_.supernet + " (" + settings_.space.name + ")";
}

const EvalResult* SupernetAccuracyOracle::evaluation(const SubnetConfig& config) const
{
    auto it = results_.find(networkKey(settings_.space, config));
    return it == results_.end() ? nullptr : &it->second;
}

}  // namespace tinyscope
