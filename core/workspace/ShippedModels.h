#pragma once
// Where the artefacts Tinyscope ships for a design space are (models/, found by DataPaths): the
// demo supernet with its card, and the accuracy predictor.
#include <string>

namespace tinyscope {

// The supernet shipped for a space: models/supernets/<space>.pth ("" if absent); by default the
// default space's (SpacePresets.h). The Fashion-MNIST spaces have one (trained by `train-supernet`).
std::string shippedSupernetPath(const std::string& spaceName);
std::string shippedSupernetPath();
// The predictor shipped for a space: models/predictors/<space>.bin ("" if absent).
std::string shippedPredictorPath(const std::string& spaceName);
// The space a checkpoint belongs to by its card (<stem>.json beside <stem>.pth, field "space");
// "" if it has no readable card.
std::string supernetCardSpace(const std::string& checkpoint);

}  // namespace tinyscope
