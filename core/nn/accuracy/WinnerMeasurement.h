#pragma once
// "Measure the winner" (the lab's search_and_measure_acc): after a predictor-driven search, the
// winner's top-1 is measured on a supernet. Predictors are trained per space and the supernet may
// belong to another space of the family (the VWW predictor, the Fashion-MNIST supernet), so the
// winner is first transferred with transferConfig: the same blocks, the resolution of the same rank.
#include "nn/accuracy/SupernetAccuracyOracle.h"
#include "search/SearchResult.h"

namespace tinyscope {

struct WinnerMeasurement {
    SubnetConfig searched;            // the winner, in the search's space
    SubnetConfig measured_config;     // what was measured, in the supernet's space
    std::string search_space, supernet_space;
    bool transferred = false;         // the spaces differ: measured_config = transferConfig(searched)
    double predicted = 0;             // the search's accuracy for the winner
    std::string predicted_by;         // the search's oracle
    double measured = 0;              // top-1 % on the supernet
    std::string measured_by;          // SupernetAccuracyOracle::describe()
    EvalResult evaluation;            // images, correct, calibration images, seconds

    Json toJson() const;
};

// Throws InputError if the search found nothing or the spaces differ in block layout; CancelledError
// when the oracle's job is cancelled.
WinnerMeasurement measureWinner(const SearchResult& result, const DesignSpace& searchSpace, SupernetAccuracyOracle& oracle);

}  // namespace tinyscope
