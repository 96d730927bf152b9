#pragma once
// The accuracy oracle that measures instead of predicting: each config is extracted from a
// supernet, its BN statistics re-calibrated on holdout images and its top-1 counted on N images
// (runEvaluation, docs/EVALUATOR.md). It plugs into the search's seam like the MLP and the search
// cannot tell the difference; at seconds per subnet its usual job is measuring the winner of a
// predictor-driven search (WinnerMeasurement.h), the lab's search_and_measure_acc.
// Torch-free header: the GUI holds one without including LibTorch.
#include "JobControl.h"
#include "nn/accuracy/EvaluationJob.h"
#include "predict/AccuracyOracle.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

class SupernetAccuracyOracle : public AccuracyOracle {
public:
    // `settings`: supernet, its space, data, images, calibration, threads; `settings.config` is ignored.
    explicit SupernetAccuracyOracle(EvaluationRequest settings);

    // Measures each distinct network once (repeats come from the memo). Progress: the evaluator's
    // stages prefixed with "subnet i/n"; cancel throws CancelledError between batches of images.
    std::vector<double> predict(const std::vector<SubnetConfig>& configs) override;
    std::string describe() const override;
    bool measures() const override { return true; }

    void setJobControl(JobControl job) { job_ = std::move(job); }
    const DesignSpace& space() const { return settings_.space; }
    const EvaluationRequest& settings() const { return settings_; }
    // The evaluator's result for a config measured before (nullptr if it was not).
    const EvalResult* evaluation(const SubnetConfig& config) const;
    std::size_t measurements() const { return results_.size(); }

private:
    EvaluationRequest settings_;
    JobControl job_;
    std::map<std::string, EvalResult> results_;   // by networkKey
};

}  // namespace tinyscope
