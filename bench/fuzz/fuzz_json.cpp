// libFuzzer target: arbitrary bytes as every JSON (and YAML) document the workbench reads —
// design spaces (then costed), subnet configs, search limits, sparse-update schemes (resolved on a
// zoo network), accuracy datasets (list and acc.dict forms), predictor cards, search options.
#include "FuzzSupport.h"

#include "cost/CostModel.h"
#include "graph/SparseScheme.h"
#include "io/JsonFile.h"
#include "io/YamlSubset.h"
#include "predict/AccuracyDataset.h"
#include "predict/PredictorCard.h"
#include "search/Constraints.h"
#include "space/ArchEncoder.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "zoo/ZooCatalog.h"

using namespace tinyscope;

namespace {

void asEveryDocument(const Json& j, const DesignSpace& vww, const Network& mcunet)
{
    fuzz::expectOnlyInputErrors([&] {
        const DesignSpace s = DesignSpace::fromJson(j, "space.json");
        ArchSampler sampler(s);
        const CostModel cost(s);
        PyRandom rng(1);
        for (const SubnetConfig& c : {sampler.minConfig(s.resolutions.front()), sampler.fullMaxConfig(s.resolutions.back()), sampler.random(rng)}) {
            cost.report(c);
            ArchEncoder(s).encode(c);
        }
    });
    fuzz::expectOnlyInputErrors([&] {
        const SubnetConfig c = SubnetConfig::fromJson(j, vww, "config.json");
        CostModel(vww).report(c);
        ArchEncoder(vww).encode(c);
    });
    fuzz::expectOnlyInputErrors([&] { Constraints::fromJson(j, "limits.json").describe(); });
    fuzz::expectOnlyInputErrors([&] { SparseScheme::fromJson(j, "scheme.json").resolve(mcunet, "scheme.json"); });
    fuzz::expectOnlyInputErrors([&] { AccuracyDataset::fromJson(j, vww, "acc.json"); });
    fuzz::expectOnlyInputErrors([&] { requireCardMatchesSpace(predictorCardFromJson(j, "card.json"), vww, "card.json"); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const DesignSpace vww = loadSpace("mcunet-vww");
    static const Network mcunet = zooModel("mcunet-5fps");
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::expectOnlyInputErrors([&] { asEveryDocument(parseJson(text, "fuzz.json"), vww, mcunet); });
    fuzz::expectOnlyInputErrors([&] {
        const Json y = parseYamlSubset(text, "fuzz.yaml");
        y.dump();   // what every reader of a scheme may do with it
        SparseScheme::fromJson(y, "fuzz.yaml").resolve(mcunet, "fuzz.yaml");
    });
    return 0;
}
