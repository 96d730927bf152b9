#pragma once
// The seam between search and accuracy: "top-1 of these configs". The MLP predictor implements
// it, and so can a supernet evaluator that measures accuracy on a dataset; the search never knows
// which. Always called with a whole batch (a generation), never one config at a time.
#include "space/SubnetConfig.h"

#include <string>
#include <vector>

namespace tinyscope {

class AccuracyOracle {
public:
    virtual ~AccuracyOracle() = default;

    // Top-1 accuracy in percent of each config, in order. Configs are valid for the oracle's space.
    virtual std::vector<double> predict(const std::vector<SubnetConfig>& configs) = 0;
    // One line for reports: what the numbers are ("MLP predictor …/mcunet-vww.bin", "measured on …").
    virtual std::string describe() const = 0;
    // True if the numbers are measurements rather than predictions.
    virtual bool measures() const { return false; }
    // Reasons to doubt the number for one config, e.g. "wid=2 never occurs in the predictor's
    // training data": the search reports them for its winner.
    virtual std::vector<std::string> caveats(const SubnetConfig& config) const { return {}; }
};

}  // namespace tinyscope
