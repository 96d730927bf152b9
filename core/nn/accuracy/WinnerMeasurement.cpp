#include "nn/accuracy/WinnerMeasurement.h"

#include "Error.h"
#include "space/SpaceTransfer.h"

namespace tinyscope {

WinnerMeasurement measureWinner(const SearchResult& result, const DesignSpace& searchSpace, SupernetAccuracyOracle& oracle)
{
    if (!result.found) throw InputError("the search found no subnet to measure");
    WinnerMeasurement m;
    m.searched = result.best.config;
    m.search_space = searchSpace.name;
    m.supernet_space = oracle.space().name;
    m.measured_config = transferConfig(m.searched, searchSpace, oracle.space());
    m.transferred = searchSpace.name != oracle.space().name;
    m.predicted = result.best.accuracy;
    m.predicted_by = result.oracle;
    m.measured = oracle.predict({m.measured_config}).front();
    m.measured_by = oracle.describe();
    m.evaluation = *oracle.evaluation(m.measured_config);
    return m;
}

Json WinnerMeasurement::toJson() const
{
    return Json{{"config", measured_config.toJson()},
                {"space", supernet_space},
                {"transferred_from", transferred ? Json(search_space) : Json(nullptr)},
                {"predicted_accuracy", predicted},
                {"predicted_by", predicted_by},
                {"measured_accuracy", measured},
                {"measured_by", measured_by},
                {"images", evaluation.images},
                {"correct", evaluation.correct},
                {"calibration_images", evaluation.calibration_images},
                {"calibration_engine", evaluation.calibration_engine.empty() ? Json(nullptr) : Json(evaluation.calibration_engine)},
                {"skipped", evaluation.skipped},
                {"seconds", evaluation.seconds},
                {"engine", evaluation.engine},
                {"dtype", evaluation.dtype},
                {"isa", evaluation.isa}};
}

}  // namespace tinyscope
