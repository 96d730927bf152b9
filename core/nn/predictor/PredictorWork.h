#pragma once
// The Predictor panel's domain work, Qt-free, run on the panel's JobRunner: training, the held-out
// split's predictions, the fresh subnets a supernet check draws, the check itself and the note that says
// what it measured. (Kept out of the panel's lambdas: a torch-free facade in tinyscope_nn.)
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/predictor/PredictorCheck.h"
#include "predict/AccuracyDataset.h"
#include "workspace/Workspace.h"

#include "JobControl.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

// Predicted and measured top-1 (percent) of the same subnets, index for index.
struct PredictedMeasured {
    std::vector<double> predicted, measured;
};

// The predictor on the held-out part of `data` (the split its card records).
PredictedMeasured heldOutPredictions(const AccuracyPredictor& predictor, const AccuracyDataset& data);

// A new predictor of `space` trained on `data` with `recipe`: progress and cancel through
// `control`, `onEpoch` after each epoch of each ensemble member (on the worker thread).
std::shared_ptr<AccuracyPredictor> trainPredictor(const DesignSpace& space, const AccuracyDataset& data, const PredictorRecipe& recipe,
                                                  const JobControl& control,
                                                  std::function<void(const EpochRecord&, int member)> onEpoch);

// "N pairs from F file(s), mean top-1 M %": the line under the dataset path.
std::string datasetSummary(const AccuracyDataset& data);

// `count` random subnets of `space` drawn with PyRandom(seed), as `tinyscope predict --random N --seed S`.
std::vector<SubnetConfig> checkDraws(const DesignSpace& space, int count, std::uint64_t seed);

struct SupernetCheck {
    PredictorCheck check;
    std::string note;   // MAE after the offset, what was measured and how (checkNote)
};

// `subnets` fresh draws (checkDraws with `seed`) predicted by `predictor` and measured on
// `target`'s supernet on `images` test images each (0: all); CancelledError through `control`.
SupernetCheck checkOnSupernet(const SupernetTarget& target, const DesignSpace& space, AccuracyPredictor& predictor,
                              int subnets, int images, std::uint64_t seed, const JobControl& control);

// "0.512 after the mean offset of +1.23 points; 2,000 images of fashion-mnist:test per subnet[; transferred]".
std::string checkNote(const PredictorCheck& check, const EvaluationRequest& measuredWith);

}  // namespace tinyscope
