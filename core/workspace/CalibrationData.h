#pragma once
// Calibration images belong to the task of the subnet they calibrate (issue 47: `deploy --space
// mcunet-vww` re-calibrated a person detector's BatchNorm on Fashion-MNIST clothing, the default
// --calib-data, without a word). One rule for every command that re-calibrates BatchNorm or sets
// int8 activation ranges (deploy, export, quantize, finetune, eval, search/predict --measure) and
// for the GUI (the Deploy dialog, the evaluator), so that they cannot disagree:
//
// * Which data. The data given (--calib-data, the Deploy dialog's "Calibration data"), else the
//   space's own: its workspace's calib_data (workspaceForSpace: fashion-mnist:holdout for the
//   Fashion-MNIST spaces). A space without any (Lab 3's VWW: its images are not packaged; a space
//   file of one's own) has no default: the request is refused, saying what the task's images are
//   and the ways out: give such images, or — where only BatchNorm needed them — keep the
//   checkpoint's BatchNorm statistics (--bn-images 0, 0 BN images in the GUI). Int8 activation
//   ranges always need images.
// * Whether it belongs. Images belong to a space's task when
//   1. the dataset has the space's number of classes (n_classes);
//   2. they are not much smaller than its inputs: the largest shorter side among the sampled images
//      is at least half the space's smallest resolution (28 px clothing for a 96–160 px detector is
//      not its task's);
//   3. their colour is the task's, where its workspace says (image_colour): a grey task refuses
//      when a sampled image is in colour (more than 1 % of its pixels have channels more than 16
//      apart, so grey saved as RGB JPEG is still grey), a colour task when every sampled one is grey.
//   Up to kCalibrationSamples images are sampled, spread evenly over the dataset; unreadable ones
//   are skipped (training and calibration skip them too).
// Qt-free and torch-free.
#include "data/ImageDataset.h"
#include "space/DesignSpace.h"

#include <memory>
#include <string>

namespace tinyscope {

constexpr std::size_t kCalibrationSamples = 8;

// How a refusal names the ways out in the front end at hand: where calibration data is given and
// what keeps the checkpoint's statistics. Empty: not named (the words alone).
struct CalibrationWords {
    std::string data;   // "--calib-data DATASET", "the Calibration data field"
    std::string keep;   // "--bn-images 0", "BN images 0"
};

// The space's own calibration data (its workspace's calib_data); "" when it has none.
std::string ownCalibrationData(const DesignSpace& space);

// What the task's images are, for messages and the GUI's placeholders:
// "2 classes: no person, person; colour; at least 48 px a side".
std::string calibrationExpectation(const DesignSpace& space);

// The data calibration reads for a subnet of `space`: `given`, else the space's own. Throws
// InputError when there is neither. `keepWouldDo`: only BatchNorm re-calibration needs the images
// (keeping the checkpoint's statistics is then a way out; int8 activation ranges need them anyway).
std::string chooseCalibrationData(const DesignSpace& space, const std::string& given, bool keepWouldDo,
                                  const CalibrationWords& words = {});

// Why `data` is not of `space`'s task ("it has 10 classes, the task 2 (no person, person)"); ""
// when it is (the rule above).
std::string calibrationMismatch(const DesignSpace& space, const ImageDataset& data);

// chooseCalibrationData, openDataset and calibrationMismatch: the dataset, or InputError naming it,
// the reason and the ways out.
std::unique_ptr<ImageDataset> openCalibrationData(const DesignSpace& space, const std::string& given, bool keepWouldDo,
                                                  const CalibrationWords& words = {});

// Fine-tuning data (compression: after pruning, k-means QAT) by the same rule: `given`, else the
// space's own training data (its workspace's train_data: fashion-mnist:fit, which the holdout
// calibration data is not part of); refused when there is neither or the images are not of the
// task. `option` names where it is given ("--finetune-data DATASET").
std::unique_ptr<ImageDataset> openTrainingData(const DesignSpace& space, const std::string& given, const std::string& option = {});

}  // namespace tinyscope
