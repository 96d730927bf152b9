#include "space/ChannelWidths.h"

#include "Error.h"

namespace tinyscope {

namespace {

bool stemIsAGroup(const SubnetLayout& L) { return L.n_blocks > 0 && L.block(0).fused && !L.block(0).residual; }

}  // namespace

std::vector<ChannelGroup> channelGroupsOf(const SubnetLayout& L)
{
    std::vector<ChannelGroup> out;
    auto add = [&](std::string name, int width) { out.push_back({std::move(name), width, width, 0}); };
    if (stemIsAGroup(L)) add("first_conv", L.first_conv);
    for (int i = 0; i < L.n_blocks; ++i)
        if (!L.block(i).fused) add("blocks." + std::to_string(i), L.block(i).mid);
    add("feature_mix_layer", L.feature_mix);
    return out;
}

void narrowLayout(SubnetLayout& L, const ChannelWidths& widths, const std::string& source)
{
    const std::vector<ChannelGroup> groups = channelGroupsOf(L);
    for (const auto& [name, width] : widths) {
        const ChannelGroup* g = nullptr;
        for (const ChannelGroup& c : groups) g = c.name == name ? &c : g;
        if (!g) {
            std::string names;
            for (const ChannelGroup& c : groups) names += (names.empty() ? "" : ", ") + c.name;
            throw InputError(source + ": no channel group '" + name + "' in the subnet; its groups: " + names);
        }
        if (width < 1 || width > g->channels)
            throw InputError(source + ": " + name + " keeps " + std::to_string(width) + " channels; the subnet's group has " +
                             std::to_string(g->channels) + " (1 to " + std::to_string(g->channels) + ")");
        if (name == "first_conv") {
            L.first_conv = width;
            L.blocks[0].cin = width;
        } else if (name == "feature_mix_layer") {
            L.feature_mix = width;
        } else {
            L.blocks[static_cast<std::size_t>(std::stoi(name.substr(7)))].mid = width;
        }
    }
}

SubnetLayout narrowedLayout(const DesignSpace& space, const SubnetConfig& config, const ChannelWidths& widths, const std::string& source)
{
    SubnetLayout L;
    layoutSubnet(space, config, L);
    narrowLayout(L, widths, source);
    return L;
}

ChannelWidths narrowedWidths(const std::vector<ChannelGroup>& groups)
{
    ChannelWidths out;
    for (const ChannelGroup& g : groups)
        if (g.kept < g.channels) out[g.name] = g.kept;
    return out;
}

}  // namespace tinyscope
