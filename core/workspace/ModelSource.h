#pragma once
// What a quantize, export, deploy or fine-tune job runs on, as a value resolved once at the edge
// (the CLI's options, the GUI's workspace) and passed by value: a subnet of a design space with
// the supernet checkpoint its weights come from, a subnet saved on its own (pruned, channel-pruned,
// fine-tuned: its own checkpoint and widths), or a zoo model with its int8 weights (a params pickle,
// read and checked when the source is made) or with seeded weights. The jobs load the checkpoint
// (off the GUI thread); nothing else is parsed back from a file. Torch-free.
#include "space/ChannelWidths.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/Network.h"

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

namespace tinyscope {

struct SubnetSource {
    DesignSpace space;
    SubnetConfig config;        // valid in `space`
    std::string checkpoint;     // the supernet checkpoint the weights come from; with own_weights the subnet's own
    std::string config_name;    // how the user named the config ("max", "min", a file); "": given as a value
    // A pruned or fine-tuned subnet saved on its own (tinyscope prune --out: a folder of subnet.pth,
    // subnet.json, space.json, pruning.json): `checkpoint` is its subnet.pth (nn/supernet/SubnetCheckpoint.h).
    bool own_weights = false;
    ChannelWidths channels;     // a channel-pruned subnet's kept widths per group; empty: the config's own
    // The network's layout: the config's, narrowed to `channels`.
    SubnetLayout layout() const;
};

struct ZooSource {
    Network network;
    std::shared_ptr<const QuantizedParams> params;   // int8 weights with their scales; null: seeded weights
    std::string params_file;                         // the pickle `params` was read from
    std::uint64_t seed = 0;                          // without params: PyTorch's default initialisation, seeded
};

class ModelSource {
public:
    ModelSource() = default;   // no model: the jobs refuse it ("give the model …")

    // The subnet `config` of `space` (validated; InputError naming `what` otherwise).
    static ModelSource subnet(DesignSpace space, SubnetConfig config, std::string checkpoint, std::string configName = "",
                              const std::string& what = "the subnet");
    // The same by names, as the CLI gives them: a space name or file ("" the default space,
    // SpacePresets.h) and a config "max", "min" or file (configByName, ArchSampler.h).
    static ModelSource subnetByName(const std::string& space, const std::string& config, std::string checkpoint);
    // A subnet saved on its own by `tinyscope prune --out` (SubnetSource::own_weights): the folder's
    // subnet.json (the config), space.json (its design space; without it `space`, as subnetByName),
    // pruning.json's channel groups (a channel-pruned subnet's widths; without it none) and subnet.pth
    // (read by the jobs). Every file is checked here: a missing file, malformed JSON (file, path,
    // reason), widths the config's groups cannot have, a --space naming another space: InputError.
    static ModelSource subnetFolder(const std::string& folder, const std::string& space = "");
    // A zoo model (ZooCatalog.h) with seeded weights.
    static ModelSource zoo(const std::string& name, std::uint64_t seed = 0);
    // A zoo model with the int8 weights of a TinyEngine params pickle, read and checked against the
    // model's graph here; `scalesFile` "" reads scale.json beside the pickle when there is one.
    static ModelSource zooWithParams(const std::string& name, const std::string& paramsFile, const std::string& scalesFile = "");

    bool empty() const { return std::holds_alternative<std::monostate>(source_); }
    const SubnetSource* asSubnet() const { return std::get_if<SubnetSource>(&source_); }
    const ZooSource* asZoo() const { return std::get_if<ZooSource>(&source_); }

    // The network the jobs build ("subnet" for a subnet, the zoo model's own name); InputError when empty.
    Network network() const;
    // "subnet <config> of <checkpoint>", "subnet saved in <folder>" (+ " (channels pruned)"), "<zoo> with
    // <params>", "<zoo> (seeded initialisation, untrained)".
    std::string describe() const;

private:
    std::variant<std::monostate, SubnetSource, ZooSource> source_;
};

}  // namespace tinyscope
