#include "workspace/ModelSource.h"

#include "Error.h"
#include "graph/ForwardLowering.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <filesystem>

namespace tinyscope {

ModelSource ModelSource::subnet(DesignSpace space, SubnetConfig config, std::string checkpoint, std::string configName, const std::string& what)
{
    config.validate(space, what);
    ModelSource m;
    m.source_ = SubnetSource{std::move(space), std::move(config), std::move(checkpoint), std::move(configName)};
    return m;
}

ModelSource ModelSource::subnetByName(const std::string& space, const std::string& config, std::string checkpoint)
{
    DesignSpace s = loadSpace(spaceOrDefault(space));
    SubnetConfig c = configByName(s, config);
    return subnet(std::move(s), std::move(c), std::move(checkpoint), config);
}

ModelSource ModelSource::zoo(const std::string& name, std::uint64_t seed)
{
    ZooSource z;
    z.network = zooModel(name);
    z.seed = seed;
    ModelSource m;
    m.source_ = std::move(z);
    return m;
}

ModelSource ModelSource::zooWithParams(const std::string& name, const std::string& paramsFile, const std::string& scalesFile)
{
    ZooSource z;
    z.network = zooModel(name);
    QuantizedParams params = readParamsPickle(paramsFile);
    std::string scales = scalesFile;
    if (scales.empty()) {
        const std::string beside = std::filesystem::path(paramsFile).parent_path().append("scale.json").string();
        std::error_code ec;
        if (std::filesystem::is_regular_file(beside, ec)) scales = beside;
    }
    if (!scales.empty()) params.scales = readScaleJson(scales);
    const std::vector<std::string> bad = paramsMismatches(lowerForward(z.network), params);
    if (!bad.empty())
        throw InputError(paramsFile + ": not the weights of " + z.network.name + ": " + bad.front() +
                         (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : ""));
    z.params = std::make_shared<const QuantizedParams>(std::move(params));
    z.params_file = paramsFile;
    ModelSource m;
    m.source_ = std::move(z);
    return m;
}

Network ModelSource::network() const
{
    if (const SubnetSource* s = asSubnet()) return networkFromSubnet(s->space, s->config, "subnet");
    if (const ZooSource* z = asZoo()) return z->network;
    throw InputError("give the model: a zoo name (tinyscope zoo list) or --supernet CKPT --config CFG");
}

std::string ModelSource::describe() const
{
    if (const SubnetSource* s = asSubnet())
        return "subnet " + (s->config_name.empty() ? s->config.toJson().dump() : s->config_name) + " of " + s->checkpoint;
    if (const ZooSource* z = asZoo())
        return z->params ? z->network.name + " with " + z->params_file : z->network.name + " (seeded initialisation, untrained)";
    return "no model";
}

}  // namespace tinyscope
