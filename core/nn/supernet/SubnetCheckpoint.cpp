#include "nn/supernet/SubnetCheckpoint.h"

#include "Error.h"

#include <ATen/ATen.h>

#include <map>
#include <set>

namespace tinyscope {

namespace {

ConvBn convShaped(std::vector<std::int64_t> shape, int stride, int groups)
{
    ConvBn c;
    const std::int64_t out = shape[0];
    c.weight = at::zeros(shape);
    c.stride = stride;
    c.groups = groups;
    for (at::Tensor* t : {&c.bn.weight, &c.bn.bias, &c.bn.running_mean, &c.bn.running_var}) *t = at::zeros({out});
    c.bn.num_batches_tracked = at::zeros({}, at::kLong);
    for (at::Tensor* t : {&c.weight, &c.bn.weight, &c.bn.bias}) t->set_requires_grad(true);   // trainable, as extract()'s
    return c;
}

// Zero tensors of the layout's shapes (what Supernet::extract would give for it).
NetWeights zeroWeights(const SubnetLayout& L, double bnEps)
{
    NetWeights net;
    net.layout = L;
    net.bn_eps = bnEps;
    net.first = convShaped({L.first_conv, 3, 3, 3}, 2, 1);
    for (int i = 0; i < L.n_blocks; ++i) {
        const BlockShape& sh = L.block(i);
        BlockWeights b;
        b.shape = sh;
        if (!sh.fused) {
            b.ib = convShaped({sh.mid, sh.cin, 1, 1}, 1, 1);
            b.dw = convShaped({sh.mid, 1, sh.kernel, sh.kernel}, sh.stride, sh.mid);
            if (sh.se_mid > 0) {
                b.se_reduce_w = at::zeros({sh.se_mid, sh.mid, 1, 1});
                b.se_reduce_b = at::zeros({sh.se_mid});
                b.se_expand_w = at::zeros({sh.mid, sh.se_mid, 1, 1});
                b.se_expand_b = at::zeros({sh.mid});
            }
        }
        b.pl = convShaped({sh.cout, sh.fused ? sh.cin : sh.mid, 1, 1}, 1, 1);
        net.blocks.push_back(std::move(b));
    }
    net.mix = convShaped({L.feature_mix, L.last_channels, 1, 1}, 1, 1);
    net.fc_w = at::zeros({L.n_classes, L.feature_mix});
    net.fc_b = at::zeros({L.n_classes});
    for (BlockWeights& b : net.blocks)
        for (at::Tensor* t : {&b.se_reduce_w, &b.se_reduce_b, &b.se_expand_w, &b.se_expand_b})
            if (t->defined()) t->set_requires_grad(true);
    net.fc_w.set_requires_grad(true);
    net.fc_b.set_requires_grad(true);
    return net;
}

std::string firstOf(const std::vector<std::string>& v)
{
    std::string s = v.front();
    if (v.size() > 1) s += " (and " + std::to_string(v.size() - 1) + " more)";
    return s;
}

}  // namespace

Subnet subnetFromStateDict(const DesignSpace& space, const SubnetConfig& config, const ChannelWidths& widths, const StateDict& sd,
                           const std::string& source)
{
    config.validate(space, source);
    Subnet sub(std::make_shared<const DesignSpace>(space), config, zeroWeights(narrowedLayout(space, config, widths, source), space.bn_eps));
    std::map<std::string, const at::Tensor*> given;
    for (const auto& [key, t] : sd) given[key] = &t;
    std::vector<std::string> missing, mismatched;
    std::set<std::string> known;
    at::NoGradGuard guard;
    for (auto& [key, target] : sub.stateDict()) {   // views of the subnet's own tensors
        known.insert(key);
        const auto it = given.find(key);
        if (it == given.end()) {
            if (target.scalar_type() != at::kLong) missing.push_back(key + " " + shapeString(target));   // older files lack num_batches_tracked
            continue;
        }
        const at::Tensor& t = *it->second;
        if (t.sizes() != target.sizes()) {
            mismatched.push_back(key + ": the file has " + shapeString(t) + ", the subnet needs " + shapeString(target));
            continue;
        }
        if (target.scalar_type() != at::kLong) {
            if (!at::isFloatingType(t.scalar_type())) {
                mismatched.push_back(key + ": expected floating-point values, the file has " + std::string(c10::toString(t.scalar_type())));
                continue;
            }
            checkTensorValues(source, key, t);
        }
        target.copy_(t);
    }
    std::vector<std::string> unexpected;
    for (const auto& [key, t] : sd)
        if (!known.count(key)) unexpected.push_back(key + " " + shapeString(t));
    if (!mismatched.empty() || !missing.empty() || !unexpected.empty()) {
        std::string msg = source + ": not the weights of this subnet";
        if (!mismatched.empty()) msg += " — shape mismatch: " + firstOf(mismatched);
        if (!missing.empty()) msg += " — missing keys: " + firstOf(missing);
        if (!unexpected.empty()) msg += " — unexpected keys: " + firstOf(unexpected);
        throw InputError(msg);
    }
    return sub;
}

Subnet loadSubnetCheckpoint(const DesignSpace& space, const SubnetConfig& config, const ChannelWidths& widths, const std::string& path)
{
    return subnetFromStateDict(space, config, widths, loadStateDict(path), path);
}

void writeSubnetFolder(const std::string& folder, const Subnet& sub, std::vector<NamedFile> more, const JobControl& job)
{
    Checkpoint ck;
    ck.state_dict = sub.stateDict();
    ck.wrapped = true;
    std::vector<NamedFile> files{{"subnet.pth", checkpointBytes(ck)},
                                 {"subnet.json", sub.config().toJson().dump(2) + "\n"},
                                 {"space.json", sub.space().toJson().dump(2) + "\n"}};
    for (NamedFile& f : more) files.push_back(std::move(f));
    replaceFilesInFolder(folder, files, job);
}

}  // namespace tinyscope
