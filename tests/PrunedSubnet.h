#pragma once
// A channel-pruned subnet of the shipped Fashion-MNIST supernet saved as `tinyscope prune --out`
// saves it (writeSubnetFolder with pruning.json's channel groups), for the suites that deploy it:
// the subnet `config` ("min", "max" or a file) sorted by importance and pruned at `ratio`.
#include "nn/compress/ChannelPruning.h"
#include "nn/supernet/SubnetCheckpoint.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ModelSource.h"
#include "workspace/ShippedModels.h"

#include <QString>

#include <optional>

namespace tinyscope::test {

// The pruned subnet (also returned in `pruned` when given) and its folder as a model source.
inline ModelSource prunedSubnetFolder(const QString& dir, const std::string& config, double ratio, std::optional<Subnet>* pruned = nullptr)
{
    const DesignSpace space = presetSpace("mcunet-fmnist");
    Subnet sub = Supernet::load(space, shippedSupernetPath()).extract(configByName(space, config));
    sortChannels(sub);
    Json groups = Json::array();
    for (const ChannelGroup& g : pruneChannels(sub, ratio))
        groups.push_back({{"name", g.name}, {"channels", g.channels}, {"kept", g.kept}, {"ratio", g.ratio}});
    writeSubnetFolder(dir.toStdString(), sub, {{"pruning.json", Json{{"channels", {{"groups", groups}}}}.dump(2)}});
    if (pruned) pruned->emplace(std::move(sub));
    return ModelSource::subnetFolder(dir.toStdString());
}

}  // namespace tinyscope::test
