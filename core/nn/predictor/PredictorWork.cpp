#include "nn/predictor/PredictorWork.h"

#include "io/Text.h"
#include "nn/accuracy/EvaluationJob.h"
#include "space/ArchSampler.h"

namespace tinyscope {

PredictedMeasured heldOutPredictions(const AccuracyPredictor& predictor, const AccuracyDataset& data)
{
    PredictedMeasured out;
    const DatasetSplit split = predictor.splitOf(data);
    std::vector<SubnetConfig> configs;
    for (std::size_t i : split.validation) {
        configs.push_back(data.samples()[i].config);
        out.measured.push_back(data.samples()[i].top1);
    }
    out.predicted = predictor.predictUncached(configs);
    return out;
}

std::shared_ptr<AccuracyPredictor> trainPredictor(const DesignSpace& space, const AccuracyDataset& data, const PredictorRecipe& recipe,
                                                  const JobControl& control,
                                                  std::function<void(const EpochRecord&, int member)> onEpoch)
{
    auto p = std::make_shared<AccuracyPredictor>(space);
    TrainingCallbacks cb;
    cb.cancel = control.cancel;
    cb.onEpoch = std::move(onEpoch);
    cb.onProgress = [control](double f) { control.report(static_cast<std::size_t>(f * 1000), 1000, ""); };
    p->train(data, recipe, cb);
    return p;
}

std::string datasetSummary(const AccuracyDataset& data)
{
    return groupThousands(static_cast<std::int64_t>(data.size())) + " pairs from " + std::to_string(data.files().size()) +
           " file(s), mean top-1 " + formatFixed(data.meanLabel() * 100, 2) + " %";
}

std::vector<SubnetConfig> checkDraws(const DesignSpace& space, int count, std::uint64_t seed)
{
    ArchSampler sampler(space);
    PyRandom rng(seed);
    std::vector<SubnetConfig> configs;
    for (int i = 0; i < count; ++i) configs.push_back(sampler.random(rng));
    return configs;
}

SupernetCheck checkOnSupernet(const SupernetTarget& target, const DesignSpace& space, AccuracyPredictor& predictor,
                              int subnets, int images, std::uint64_t seed, const JobControl& control)
{
    EvaluationRequest rq = supernetRequest(target);
    rq.images = static_cast<std::size_t>(images);
    SupernetAccuracyOracle measurer(rq);
    measurer.setJobControl(control);
    SupernetCheck out;
    out.check = checkPredictor(checkDraws(space, subnets, seed), space, predictor, measurer);
    out.note = checkNote(out.check, rq);
    return out;
}

std::string checkNote(const PredictorCheck& check, const EvaluationRequest& rq)
{
    return formatFixed(check.mae_after_offset, 3) + " after the mean offset of " + (check.mean_offset >= 0 ? "+" : "") +
           formatFixed(check.mean_offset, 2) + " points; " +
           (rq.images ? groupThousands(static_cast<std::int64_t>(rq.images)) : std::string("all")) + " images of " + rq.data +
           " per subnet" +
           (check.transferred ? "; configs transferred to " + rq.space.name + " (another task than the predictor's: compare rankings only)"
                              : std::string());
}

}  // namespace tinyscope
