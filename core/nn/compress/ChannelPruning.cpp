#include "nn/compress/ChannelPruning.h"

#include "Error.h"
#include "compress/Pruning.h"
#include "io/Text.h"
#include "space/ChannelWidths.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>

namespace tinyscope {

namespace {

// A group's producer, its readers and where its importance comes from.
struct Group {
    std::string name;
    ConvBn* producer = nullptr;          // outputs (dim 0) and its BatchNorm
    BlockWeights* block = nullptr;       // a block's expanded channels: dw, SE and pl follow
    ConvBn* reader = nullptr;            // the next channel-mixing conv (inputs: dim 1); null: the classifier
    int* width = nullptr;                // the layout's count
};

std::vector<Group> groupsOf(NetWeights& net)
{
    std::vector<Group> out;
    if (!net.blocks.empty() && net.blocks[0].shape.fused && !net.blocks[0].shape.residual)
        out.push_back({"first_conv", &net.first, nullptr, &net.blocks[0].pl, &net.layout.first_conv});
    for (BlockWeights& b : net.blocks)
        if (!b.shape.fused)
            out.push_back({"blocks." + std::to_string(b.shape.index), &b.ib, &b, &b.pl,
                           &net.layout.blocks[static_cast<std::size_t>(b.shape.index)].mid});
    out.push_back({"feature_mix_layer", &net.mix, nullptr, nullptr, &net.layout.feature_mix});
    return out;
}

at::Tensor pick(const at::Tensor& t, std::int64_t dim, const at::Tensor& index)
{
    return t.defined() ? t.detach().index_select(dim, index).contiguous() : t;
}

void pickOutputs(ConvBn& c, const at::Tensor& index)
{
    c.weight = pick(c.weight, 0, index);
    for (at::Tensor* t : {&c.bn.weight, &c.bn.bias, &c.bn.running_mean, &c.bn.running_var}) *t = pick(*t, 0, index);
}

// Keeps channels `index` (in that order) of group g everywhere they appear.
void select(NetWeights& net, Group& g, const at::Tensor& index)
{
    pickOutputs(*g.producer, index);
    if (g.block) {
        BlockWeights& b = *g.block;
        pickOutputs(b.dw, index);   // depthwise: one filter per channel
        b.se_reduce_w = pick(b.se_reduce_w, 1, index);
        b.se_expand_w = pick(b.se_expand_w, 0, index);
        b.se_expand_b = pick(b.se_expand_b, 0, index);
    }
    if (g.reader) g.reader->weight = pick(g.reader->weight, 1, index);
    else net.fc_w = pick(net.fc_w, 1, index);
    const int width = static_cast<int>(index.numel());
    *g.width = width;   // the layout's count
    if (g.block) {
        g.block->shape.mid = width;
        g.block->dw.groups = width;   // depthwise: a group per channel
    }
    if (g.producer == &net.first) {   // block 0 reads the stem
        net.layout.blocks[0].cin = width;
        net.blocks[0].shape.cin = width;
    }
}

// Importance of each channel of g: the Frobenius norm of the reader's weight over its input column.
std::vector<double> importanceOf(const NetWeights& net, const Group& g)
{
    const at::Tensor w = (g.reader ? g.reader->weight : net.fc_w).detach().to(at::kFloat).contiguous();
    const int outputs = static_cast<int>(w.size(0)), inputs = static_cast<int>(w.size(1));
    return inputChannelImportance(w.data_ptr<float>(), outputs, inputs, static_cast<std::size_t>(w.numel() / (outputs * inputs)));
}

at::Tensor indexTensor(const std::vector<int>& v)
{
    std::vector<std::int64_t> l(v.begin(), v.end());
    return at::tensor(l, at::kLong);
}

// Unfolded, own copies of every tensor (the caller's subnet is changed only through replaceWeights).
NetWeights unfoldedCopy(Subnet& sub)
{
    sub.setFolded(false);
    return sub.weights();
}

}  // namespace

std::vector<ChannelGroup> channelGroups(const Subnet& sub)
{
    return channelGroupsOf(sub.weights().layout);
}

void sortChannels(Subnet& sub)
{
    NetWeights net = unfoldedCopy(sub);
    at::NoGradGuard guard;
    for (Group& g : groupsOf(net)) select(net, g, indexTensor(channelOrderByImportance(importanceOf(net, g))));
    sub.replaceWeights(std::move(net));
}

std::vector<ChannelGroup> plannedChannels(const Subnet& sub, double uniform, const std::map<std::string, double>& ratios)
{
    auto check = [](double r, const std::string& what) {
        if (std::isnan(r) || r < 0 || r > 1) throw InputError(what + ": channel ratio " + formatFixed(r, 2) + " is outside [0, 1]");
    };
    check(uniform, "--channels");
    std::vector<ChannelGroup> out = channelGroups(sub);
    std::string names;
    for (const ChannelGroup& g : out) names += (names.empty() ? "" : ", ") + g.name;
    for (const auto& [name, r] : ratios) {
        check(r, name);
        bool found = false;
        for (const ChannelGroup& g : out) found |= g.name == name;
        if (!found) throw InputError("no channel group '" + name + "' in the subnet; its groups: " + names);
    }
    for (ChannelGroup& g : out) {
        const auto it = ratios.find(g.name);
        g.ratio = it != ratios.end() ? it->second : uniform;
        g.kept = channelsToKeep(g.channels, g.ratio);
        if (g.kept < 1)
            throw InputError(g.name + ": channel ratio " + formatFixed(g.ratio, 2) + " leaves none of its " + std::to_string(g.channels) + " channels");
    }
    return out;
}

namespace {

// Keeps the first `kept` channels of every group (groups as channelGroups(sub) lists them).
void keepFirstChannels(Subnet& sub, const std::vector<ChannelGroup>& planned)
{
    NetWeights net = unfoldedCopy(sub);
    std::vector<Group> groups = groupsOf(net);
    if (groups.size() != planned.size()) throw std::logic_error("channel groups of the layout and of the tensors differ");
    at::NoGradGuard guard;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        if (groups[i].name != planned[i].name) throw std::logic_error("channel group " + planned[i].name + " is " + groups[i].name + " in the tensors");
        std::vector<int> first(static_cast<std::size_t>(planned[i].kept));
        for (int c = 0; c < planned[i].kept; ++c) first[static_cast<std::size_t>(c)] = c;
        select(net, groups[i], indexTensor(first));
    }
    sub.replaceWeights(std::move(net));
}

}  // namespace

std::vector<ChannelGroup> pruneChannels(Subnet& sub, double uniform, const std::map<std::string, double>& ratios)
{
    const std::vector<ChannelGroup> out = plannedChannels(sub, uniform, ratios);
    keepFirstChannels(sub, out);
    return out;
}

void narrowChannels(Subnet& sub, const ChannelWidths& widths, const std::string& source)
{
    SubnetLayout narrowed = sub.weights().layout;
    narrowLayout(narrowed, widths, source);   // refuses unknown groups and widths out of range
    std::vector<ChannelGroup> planned = channelGroups(sub);
    for (ChannelGroup& g : planned)
        if (const auto it = widths.find(g.name); it != widths.end()) g.kept = it->second;
    keepFirstChannels(sub, planned);
}

}  // namespace tinyscope
