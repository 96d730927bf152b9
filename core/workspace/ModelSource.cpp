#include "workspace/ModelSource.h"

#include "Error.h"
#include "graph/ForwardLowering.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"
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

ModelSource ModelSource::subnetFolder(const std::string& folder, const std::string& space)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw InputError(pathForMessage(folder) + ": no such folder (give a folder tinyscope prune --out wrote)");
    const fs::path dir(folder);
    const std::string weights = (dir / "subnet.pth").string(), config = (dir / "subnet.json").string();
    const std::string spaceFile = (dir / "space.json").string(), pruning = (dir / "pruning.json").string();
    for (const std::string& f : {weights, config})
        if (!fs::is_regular_file(f, ec))
            throw InputError(pathForMessage(f) + ": missing; a saved subnet's folder holds subnet.pth and subnet.json (tinyscope prune --out)");
    DesignSpace s;
    if (fs::is_regular_file(spaceFile, ec)) {
        s = loadSpace(spaceFile);
        if (!space.empty() && loadSpace(spaceOrDefault(space)).name != s.name)
            throw InputError("--space " + space + ": the folder's space.json is space '" + s.name + "'");
    } else {
        s = loadSpace(spaceOrDefault(space));
    }
    SubnetConfig c = SubnetConfig::loadFile(config, s);
    ModelSource m = subnet(std::move(s), std::move(c), weights, folder, config);
    SubnetSource& src = std::get<SubnetSource>(m.source_);
    src.own_weights = true;
    if (fs::is_regular_file(pruning, ec)) {   // a channel-pruned subnet's widths
        const Json j = readJsonFile(pruning);
        const JsonPath root(pruning, j);
        if (root.has("channels")) {
            SubnetLayout full;
            layoutSubnet(src.space, src.config, full);
            const std::vector<ChannelGroup> own = channelGroupsOf(full);
            const JsonPath groups = root["channels"]["groups"];
            for (std::size_t i = 0; i < groups.size(); ++i) {
                const JsonPath g = groups[i];
                const std::string name = g["name"].asString();
                const int channels = g["channels"].asIntIn(1, 1 << 20), kept = g["kept"].asIntIn(1, channels);
                const ChannelGroup* match = nullptr;
                for (const ChannelGroup& o : own) match = o.name == name ? &o : match;
                if (match && match->channels != channels)
                    g["channels"].fail("the config's " + name + " has " + std::to_string(match->channels) + " channels, not " +
                                       std::to_string(channels) + " (pruning.json and subnet.json of different subnets?)");
                if (kept < channels) src.channels[name] = kept;
            }
            src.layout();   // a group the config lacks is named here
        }
    }
    return m;
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

SubnetLayout SubnetSource::layout() const
{
    return narrowedLayout(space, config, channels, config_name.empty() ? "the subnet" : config_name);
}

Network ModelSource::network() const
{
    if (const SubnetSource* s = asSubnet()) return networkFromLayout(s->layout(), s->space.name, "subnet");
    if (const ZooSource* z = asZoo()) return z->network;
    throw InputError("give the model: a zoo name (tinyscope zoo list) or --supernet CKPT --config CFG");
}

std::string ModelSource::describe() const
{
    if (const SubnetSource* s = asSubnet(); s && s->own_weights)
        return "subnet saved in " + s->config_name + (s->channels.empty() ? "" : " (channels pruned)");
    if (const SubnetSource* s = asSubnet())
        return "subnet " + (s->config_name.empty() ? s->config.toJson().dump() : s->config_name) + " of " + s->checkpoint;
    if (const ZooSource* z = asZoo())
        return z->params ? z->network.name + " with " + z->params_file : z->network.name + " (seeded initialisation, untrained)";
    return "no model";
}

}  // namespace tinyscope
