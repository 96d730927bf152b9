#pragma once
// The subnet an EvaluationRequest measures, ready to run: extracted from the (cached) supernet,
// BatchNorm re-calibrated as the request says, folded. For jobs that change the subnet before
// measuring it (pruning, nn/compress). Includes LibTorch types (Subnet).
#include "nn/accuracy/EvaluationJob.h"
#include "nn/supernet/Supernet.h"

#include <memory>
#include <vector>

namespace tinyscope {

// The request's data (its class count checked against the space, the config against the space)
// and the items it measures (split, first `images`); InputError when there are none.
struct EvaluationData {
    std::unique_ptr<ImageDataset> data;
    std::vector<std::size_t> items;
};
EvaluationData evaluationData(const EvaluationRequest& request);
// The calibration data the request needs (BatchNorm re-calibration, int8 activation ranges),
// chosen and checked against the space's task; null when it needs none.
std::unique_ptr<ImageDataset> evaluationCalibrationData(const EvaluationRequest& request);
Subnet preparedSubnet(const EvaluationRequest& request, const ImageDataset* calib, const JobControl& job = {},
                      CalibrationReport* calibrated = nullptr);
// Top-1 (percent) of `sub` as its raw weights are now, on the request's items, engine and data type:
// BatchNorm folded for the measurement and unfolded after, so the caller can change weights again.
double measuredTop1(Subnet& sub, const EvaluationRequest& request, const EvaluationData& data, const JobControl& job = {});

}  // namespace tinyscope
