#include "space/SubnetConfig.h"

#include "Error.h"
#include "io/Text.h"
#include "space/DesignSpace.h"

namespace tinyscope {

namespace {

std::vector<int> readList(const JsonPath& p, std::size_t expected)
{
    std::vector<int> v = p.asIntList();
    if (v.size() != expected)
        p.fail("expected " + std::to_string(expected) + " entries, got " + std::to_string(v.size()));
    return v;
}

}  // namespace

SubnetConfig SubnetConfig::fromJson(const Json& j, const DesignSpace& space, const std::string& source)
{
    JsonPath root(source, j);
    if (!j.is_object()) root.fail("expected a subnet config object {\"wid\", \"ks\", \"e\", \"d\", \"image_size\"}");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k != "wid" && k != "ks" && k != "e" && k != "d" && k != "image_size")
            throw InputError(source + ": unknown field '" + k + "' (a subnet config has wid, ks, e, d, image_size)");
    }
    SubnetConfig c;
    c.wid = root["wid"].asInt();
    c.ks = readList(root["ks"], static_cast<std::size_t>(space.maxBlocks()));
    c.e = readList(root["e"], static_cast<std::size_t>(space.maxBlocks()));
    c.d = readList(root["d"], static_cast<std::size_t>(space.numStages()));
    c.image_size = root["image_size"].asInt();
    c.validate(space, source);
    return c;
}

SubnetConfig SubnetConfig::loadFile(const std::string& path, const DesignSpace& space)
{
    return fromJson(readJsonFile(path), space, path);
}

Json SubnetConfig::toJson() const
{
    // Key order as the lab writes it.
    Json j = Json::object();
    j["wid"] = wid;
    j["ks"] = ks;
    j["e"] = e;
    j["d"] = d;
    j["image_size"] = image_size;
    return j;
}

void SubnetConfig::validate(const DesignSpace& space, const std::string& source) const
{
    auto bad = [&](const std::string& field, const std::string& what) {
        throw InputError(source + ": " + field + ": " + what);
    };
    if (wid < 0 || wid >= space.numWidths())
        bad("wid", std::to_string(wid) + " is not a width index of space '" + space.name + "' (0.." +
                       std::to_string(space.numWidths() - 1) + ")");
    if (space.resolutionIndex(image_size) < 0)
        bad("image_size", std::to_string(image_size) + " is not one of " + formatList(space.resolutions));
    if (ks.size() != static_cast<std::size_t>(space.maxBlocks()))
        bad("ks", "expected " + std::to_string(space.maxBlocks()) + " entries, got " + std::to_string(ks.size()));
    if (e.size() != static_cast<std::size_t>(space.maxBlocks()))
        bad("e", "expected " + std::to_string(space.maxBlocks()) + " entries, got " + std::to_string(e.size()));
    if (d.size() != static_cast<std::size_t>(space.numStages()))
        bad("d", "expected " + std::to_string(space.numStages()) + " entries, got " + std::to_string(d.size()));
    for (int s = 0; s < space.numStages(); ++s) {
        const StageSpec& st = space.stages[static_cast<std::size_t>(s)];
        if (st.elastic_depth) {
            if (space.depthIndex(d[static_cast<std::size_t>(s)]) < 0)
                bad("d[" + std::to_string(s) + "]", std::to_string(d[static_cast<std::size_t>(s)]) + " is not one of " +
                                                         formatList(space.depth_list));
        } else if (d[static_cast<std::size_t>(s)] < 0) {
            bad("d[" + std::to_string(s) + "]", "must be >= 0, got " + std::to_string(d[static_cast<std::size_t>(s)]));
        }
    }
    for (int b = 0; b < space.maxBlocks(); ++b) {
        std::size_t i = static_cast<std::size_t>(b);
        bool active = blockActive(space, b);
        // Inactive blocks may hold 0 (the encoder's decoded form) or any listed value.
        if (!(ks[i] == 0 && !active) && space.kernelIndex(ks[i]) < 0)
            bad("ks[" + std::to_string(b) + "]", std::to_string(ks[i]) + " is not one of " + formatList(space.ks_list));
        if (!(e[i] == 0 && !active) && space.expandIndex(e[i]) < 0)
            bad("e[" + std::to_string(b) + "]", std::to_string(e[i]) + " is not one of " + formatList(space.expand_list));
    }
}

int SubnetConfig::activeDepth(const DesignSpace& space, int stage) const
{
    const StageSpec& st = space.stages[static_cast<std::size_t>(stage)];
    if (!st.elastic_depth) return st.base_depth;
    int depth = st.base_depth + d[static_cast<std::size_t>(stage)];
    return depth < st.max_blocks ? depth : st.max_blocks;
}

bool SubnetConfig::blockActive(const DesignSpace& space, int block) const
{
    int s = space.stageOfBlock(block);
    return block - space.stages[static_cast<std::size_t>(s)].first_block < activeDepth(space, s);
}

SubnetConfig SubnetConfig::canonical(const DesignSpace& space) const
{
    SubnetConfig c = *this;
    for (int b = 0; b < space.maxBlocks(); ++b) {
        if (!blockActive(space, b)) {
            c.ks[static_cast<std::size_t>(b)] = 0;
            c.e[static_cast<std::size_t>(b)] = 0;
        }
    }
    for (int s = 0; s < space.numStages(); ++s)
        if (!space.stages[static_cast<std::size_t>(s)].elastic_depth)
            c.d[static_cast<std::size_t>(s)] = space.stages[static_cast<std::size_t>(s)].base_depth;
    return c;
}

}  // namespace tinyscope
