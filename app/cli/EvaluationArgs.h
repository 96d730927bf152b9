#pragma once
// The options that say which subnet of which supernet is measured on what, as eval, classify and
// prune take them: --supernet CKPT --space S --config C|min|max --resolution R, the data, the
// BatchNorm re-calibration, batch, threads, engine and data type.
#include "cli/CliArgs.h"
#include "nn/accuracy/EvaluationJob.h"

#include <set>
#include <string>

namespace tinyscope::cli {

// The supernet and space: explicit options, else the shipped demo supernet and its space.
struct SupernetChoice {
    DesignSpace space;
    std::string path;
};
SupernetChoice chooseSupernet(const CliArgs& a);
// --config (default max) at --resolution.
SubnetConfig chooseConfig(const CliArgs& a, const DesignSpace& space);

// eval's options (valued, flags) and the request they make; every number is checked before
// anything is loaded.
extern const std::set<std::string> kEvaluationValued;
extern const std::set<std::string> kEvaluationFlags;
EvaluationRequest evaluationFromArgs(const CliArgs& a);

}  // namespace tinyscope::cli
