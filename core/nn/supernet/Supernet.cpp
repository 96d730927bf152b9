#include "nn/supernet/Supernet.h"

#include "Error.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace tinyscope {

namespace {

void registerPath(torch::nn::Module& root, const std::string& dotted, const at::Tensor& t, bool buffer)
{
    torch::nn::Module* m = &root;
    std::size_t start = 0;
    while (true) {
        auto dot = dotted.find('.', start);
        if (dot == std::string::npos) break;
        const std::string part = dotted.substr(start, dot - start);
        auto children = m->named_children();
        std::shared_ptr<torch::nn::Module> child;
        if (auto* c = children.find(part)) child = *c;
        else child = m->register_module(part, std::make_shared<torch::nn::Module>(part));
        m = child.get();
        start = dot + 1;
    }
    const std::string leaf = dotted.substr(start);
    if (buffer) m->register_buffer(leaf, t);
    else m->register_parameter(leaf, t, t.requires_grad());
}

// At most eight entries of `v`, then how many more: "a; b; … and 52 more" (messages).
std::string firstEntries(const std::vector<std::string>& v)
{
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < 8; ++i) out += (i ? "; " : "") + v[i];
    if (v.size() > 8) out += "; and " + std::to_string(v.size() - 8) + " more";
    return out;
}

// The tensor a checkpoint holds for schema entry `e` as the supernet stores it (float32 or int64),
// or an empty tensor with the reason in `problem` (a shape or type mismatch, named).
at::Tensor schemaTensor(const SchemaEntry& e, const at::Tensor& t, const DesignSpace& space, const std::string& source, std::string* problem)
{
    if (t.sizes().vec() != e.shape) {
        *problem = e.key + ": checkpoint has " + shapeString(t) + ", space '" + space.name + "' needs " + shapeString(e.shape);
        return {};
    }
    if (e.is_int64) return t.to(at::kLong).clone();
    if (!at::isFloatingType(t.scalar_type())) {
        *problem = e.key + ": expected floating-point values, checkpoint has " + std::string(c10::toString(t.scalar_type()));
        return {};
    }
    checkTensorValues(source, e.key, t);
    at::Tensor f = t.to(at::kFloat).contiguous().clone();
    if (!e.is_buffer) f.set_requires_grad(true);
    return f;
}

// What a reader of the space's supernet may take: every schema tensor in float64 (the widest type
// a checkpoint may store), so that a file declaring more is refused before it is extracted.
CheckpointReadOptions readOptionsFor(const DesignSpace& space)
{
    CheckpointReadOptions options;
    std::uint64_t elements = 0;
    for (const SchemaEntry& e : supernetSchema(space).entries) {
        std::int64_t n = 0;
        if (elementCount(e.shape, n)) elements += static_cast<std::uint64_t>(n);
    }
    options.max_tensor_bytes = elements * 8 + (std::uint64_t(1) << 20);
    options.limit_reason = "a supernet of space '" + space.name + "' needs at most " + std::to_string(elements) + " elements of 8 bytes";
    return options;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string WeightTransfer::summary() const
{
    std::string s = std::to_string(taken) + " tensors taken from " + source;
    s += fresh.empty() ? ", none new" : ", " + std::to_string(fresh.size()) + " new (initialised fresh: " + firstEntries(fresh) + ")";
    if (!unused.empty()) s += ", " + std::to_string(unused.size()) + " of the file unused (" + firstEntries(unused) + ")";
    return s;
}

Supernet Supernet::fromStateDict(const DesignSpace& space, const StateDict& sd, const std::string& source)
{
    Supernet s;
    s.space_ = std::make_shared<const DesignSpace>(space);
    s.schema_ = supernetSchema(space);
    std::map<std::string, const at::Tensor*> given;
    for (const auto& kv : sd) given[kv.first] = &kv.second;

    std::vector<std::string> missing, unexpected, mismatched;
    std::set<std::string> known;
    for (const SchemaEntry& e : s.schema_.entries) {
        known.insert(e.key);
        auto it = given.find(e.key);
        if (it == given.end()) {
            if (e.is_int64) {   // older files have no num_batches_tracked
                s.t_[e.key] = at::zeros({}, at::kLong);
                continue;
            }
            missing.push_back(e.key + " " + shapeString(e.shape));
            continue;
        }
        std::string problem;
        at::Tensor t = schemaTensor(e, *it->second, space, source, &problem);
        if (!problem.empty()) mismatched.push_back(problem);
        else s.t_[e.key] = t;
    }
    for (const auto& kv : sd)
        if (!known.count(kv.first)) unexpected.push_back(kv.first + " " + shapeString(kv.second));
    if (!missing.empty() || !unexpected.empty() || !mismatched.empty()) {
        std::string msg = source + ": not a supernet of space '" + space.name + "'";
        if (!mismatched.empty()) msg += " — shape mismatch: " + firstEntries(mismatched);
        if (!missing.empty()) msg += " — missing keys: " + firstEntries(missing);
        if (!unexpected.empty()) msg += " — unexpected keys: " + firstEntries(unexpected);
        throw InputError(msg);
    }
    return s;
}

Supernet Supernet::load(const DesignSpace& space, const std::string& path)
{
    return fromStateDict(space, loadStateDict(path, readOptionsFor(space)), path);
}

Supernet Supernet::initializeFrom(const DesignSpace& space, std::uint64_t seed, const std::string& path, WeightTransfer* transfer)
{
    Supernet s = initialize(space, seed);
    const StateDict sd = loadStateDict(path, readOptionsFor(space));
    std::map<std::string, const at::Tensor*> given;
    for (const auto& kv : sd) given[kv.first] = &kv.second;
    WeightTransfer w;
    w.source = path;
    std::vector<std::string> mismatched;
    std::set<std::string> known;
    for (const SchemaEntry& e : s.schema_.entries) {
        known.insert(e.key);
        auto it = given.find(e.key);
        if (it == given.end()) {
            if (!e.is_int64) w.fresh.push_back(e.key);   // a BN's step counter is not a weight
            continue;
        }
        std::string problem;
        at::Tensor t = schemaTensor(e, *it->second, space, path, &problem);
        if (!problem.empty()) {
            mismatched.push_back(problem);
            continue;
        }
        s.t_[e.key] = t;
        if (!e.is_int64) ++w.taken;
    }
    for (const auto& kv : sd)
        if (!known.count(kv.first)) w.unused.push_back(kv.first);
    if (!mismatched.empty())
        throw InputError(path + ": not the weights of a related space of '" + space.name +
                         "' (a layer both have must have one shape) — shape mismatch: " + firstEntries(mismatched));
    if (w.taken == 0) throw InputError(path + ": holds no weight of space '" + space.name + "' (keys: " + firstEntries(w.unused) + ")");
    if (transfer) *transfer = std::move(w);
    return s;
}

Supernet Supernet::initialize(const DesignSpace& space, std::uint64_t seed)
{
    Supernet s;
    s.space_ = std::make_shared<const DesignSpace>(space);
    s.schema_ = supernetSchema(space);
    at::Generator gen = at::detail::createCPUGenerator(seed);
    at::NoGradGuard guard;
    for (const SchemaEntry& e : s.schema_.entries) {
        at::Tensor t;
        const std::string& k = e.key;
        auto ends = [&](const char* suf) {
            std::string s2 = suf;
            return k.size() >= s2.size() && k.compare(k.size() - s2.size(), s2.size(), s2) == 0;
        };
        if (e.is_int64) {
            t = at::zeros({}, at::kLong);
        } else if (ends("_matrix")) {
            t = at::eye(e.shape[0], at::kFloat);
        } else if (ends("running_var") || ends("bn.bn.weight")) {
            t = at::ones(e.shape, at::kFloat);
        } else if (ends("running_mean") || ends("bn.bn.bias") || ends(".bias")) {
            t = at::zeros(e.shape, at::kFloat);
        } else if (e.shape.size() == 4) {
            // He initialisation over fan-out (once-for-all's 'he_fout').
            const double fanOut = static_cast<double>(e.shape[0] * e.shape[2] * e.shape[3]) /
                                  (e.shape[1] == 1 ? static_cast<double>(e.shape[0]) : 1.0);
            t = at::empty(e.shape, at::kFloat).normal_(0.0, std::sqrt(2.0 / fanOut), gen);
        } else {
            const double bound = 1.0 / std::sqrt(static_cast<double>(e.shape[1]));
            t = at::empty(e.shape, at::kFloat).uniform_(-bound, bound, gen);
        }
        if (!e.is_buffer) t.set_requires_grad(true);
        s.t_[k] = t;
    }
    return s;
}

at::Tensor& Supernet::tensor(const std::string& key)
{
    auto it = t_.find(key);
    if (it == t_.end()) throw InputError("supernet has no tensor '" + key + "'");
    return it->second;
}

const at::Tensor& Supernet::tensor(const std::string& key) const
{
    return const_cast<Supernet*>(this)->tensor(key);
}

StateDict Supernet::stateDict() const
{
    StateDict sd;
    for (const SchemaEntry& e : schema_.entries) sd.emplace_back(e.key, t_.at(e.key).detach());
    return sd;
}

void Supernet::save(const std::string& path) const
{
    saveStateDict(path, stateDict(), true);
}

std::int64_t Supernet::parameterBytes() const
{
    std::int64_t n = 0;
    for (const auto& kv : t_) n += kv.second.nbytes();
    return n;
}

std::vector<at::Tensor> Supernet::parameters() const
{
    std::vector<at::Tensor> out;
    for (const SchemaEntry& e : schema_.entries)
        if (!e.is_buffer) out.push_back(t_.at(e.key));
    return out;
}

NetWeights Supernet::weightsFor(const SubnetConfig& config) const
{
    const DesignSpace& space = *space_;
    NetWeights net;
    layoutSubnet(space, config, net.layout);
    net.bn_eps = space.bn_eps;
    const SubnetLayout& L = net.layout;

    auto bn = [&](const std::string& prefix, int c) {
        BnWeights b;
        b.weight = tensor(prefix + "bn.bn.weight").slice(0, 0, c);
        b.bias = tensor(prefix + "bn.bn.bias").slice(0, 0, c);
        b.running_mean = tensor(prefix + "bn.bn.running_mean").slice(0, 0, c);
        b.running_var = tensor(prefix + "bn.bn.running_var").slice(0, 0, c);
        b.num_batches_tracked = tensor(prefix + "bn.bn.num_batches_tracked");
        return b;
    };
    auto conv = [&](const std::string& prefix, int cout, int cin, int stride, int groups) {
        ConvBn c;
        c.weight = tensor(prefix + "conv.conv.weight").slice(0, 0, cout);
        if (groups == 1) c.weight = c.weight.slice(1, 0, cin);
        c.stride = stride;
        c.groups = groups;
        c.bn = bn(prefix, cout);
        return c;
    };

    net.first = conv("first_conv.", L.first_conv, 3, 2, 1);
    std::vector<int> ks = space.ks_list;
    std::sort(ks.begin(), ks.end(), std::greater<int>());
    for (int i = 0; i < L.n_blocks; ++i) {
        const BlockShape& sh = L.block(i);
        BlockWeights b;
        b.shape = sh;
        const std::string p = supernetBlockPrefix(sh.fused ? 0 : sh.supernet_block);
        if (!sh.fused) {
            b.ib = conv(p + "inverted_bottleneck.", sh.mid, sh.cin, 1, 1);
            ConvBn dw = conv(p + "depth_conv.", sh.mid, 1, sh.stride, sh.mid);
            // Kernel transform: centre crop, then v·Mᵀ per channel, one size step at a time.
            at::Tensor w = dw.weight;
            int cur = ks.front();
            for (std::size_t s = 1; s < ks.size() && cur > sh.kernel; ++s) {
                const int next = ks[s];
                const int start = (cur - next) / 2;
                at::Tensor crop = w.slice(2, start, start + next).slice(3, start, start + next).reshape({sh.mid, next * next});
                const at::Tensor& m = tensor(p + "depth_conv.conv." + kernelTransformName(cur, next));
                w = at::linear(crop, m).view({sh.mid, 1, next, next});
                cur = next;
            }
            dw.weight = w;
            b.dw = dw;
            if (sh.se_mid > 0) {
                b.se_reduce_w = tensor(p + "depth_conv.se.fc.reduce.weight").slice(0, 0, sh.se_mid).slice(1, 0, sh.mid);
                b.se_reduce_b = tensor(p + "depth_conv.se.fc.reduce.bias").slice(0, 0, sh.se_mid);
                b.se_expand_w = tensor(p + "depth_conv.se.fc.expand.weight").slice(0, 0, sh.mid).slice(1, 0, sh.se_mid);
                b.se_expand_b = tensor(p + "depth_conv.se.fc.expand.bias").slice(0, 0, sh.mid);
            }
        }
        b.pl = conv(p + "point_linear.", sh.cout, sh.fused ? sh.cin : sh.mid, 1, 1);
        net.blocks.push_back(std::move(b));
    }
    net.mix = conv("feature_mix_layer.", L.feature_mix, L.last_channels, 1, 1);
    net.fc_w = tensor("classifier.linear.linear.weight");
    net.fc_b = tensor("classifier.linear.linear.bias");
    return net;
}

namespace {
void cloneConv(ConvBn& c)
{
    auto own = [](at::Tensor& t, bool param) {
        if (!t.defined()) return;
        t = t.detach().clone().contiguous();
        if (param) t.set_requires_grad(true);
    };
    own(c.weight, true);
    own(c.bn.weight, true);
    own(c.bn.bias, true);
    own(c.bn.running_mean, false);
    own(c.bn.running_var, false);
    own(c.bn.num_batches_tracked, false);
}
}  // namespace

Subnet Supernet::extract(const SubnetConfig& config) const
{
    NetWeights net;
    {
        at::NoGradGuard guard;
        net = weightsFor(config);
        forEachConvBn(net, cloneConv);
        for (BlockWeights& b : net.blocks)
            for (at::Tensor* t : {&b.se_reduce_w, &b.se_reduce_b, &b.se_expand_w, &b.se_expand_b})
                if (t->defined()) *t = t->detach().clone().contiguous();
        net.fc_w = net.fc_w.detach().clone();
        net.fc_b = net.fc_b.detach().clone();
    }
    for (BlockWeights& b : net.blocks)
        for (at::Tensor* t : {&b.se_reduce_w, &b.se_reduce_b, &b.se_expand_w, &b.se_expand_b})
            if (t->defined()) t->set_requires_grad(true);
    net.fc_w.set_requires_grad(true);
    net.fc_b.set_requires_grad(true);
    return Subnet(space_, config, std::move(net));
}

// ---------------------------------------------------------------------------------------------

Subnet::Subnet(std::shared_ptr<const DesignSpace> space, SubnetConfig config, NetWeights weights)
    : space_(std::move(space)), config_(std::move(config)), net_(std::move(weights))
{
}
Subnet::Subnet(Subnet&&) noexcept = default;
Subnet& Subnet::operator=(Subnet&&) noexcept = default;
Subnet::~Subnet() = default;

at::Tensor Subnet::forward(const at::Tensor& x) const
{
    at::NoGradGuard guard;
    return forwardNet(net_, x, ForwardOptions{});
}

at::Tensor Subnet::forward(const at::Tensor& x, const ForwardOptions& options) const
{
    return forwardNet(net_, x, options);
}

StateDict Subnet::stateDict() const
{
    StateDict sd;
    auto convBn = [&](const std::string& prefix, const ConvBn& c) {
        sd.emplace_back(prefix + "conv.weight", c.weight.detach());
        sd.emplace_back(prefix + "bn.weight", c.bn.weight.detach());
        sd.emplace_back(prefix + "bn.bias", c.bn.bias.detach());
        sd.emplace_back(prefix + "bn.running_mean", c.bn.running_mean);
        sd.emplace_back(prefix + "bn.running_var", c.bn.running_var);
        sd.emplace_back(prefix + "bn.num_batches_tracked", c.bn.num_batches_tracked);
    };
    convBn("first_conv.", net_.first);
    for (const BlockWeights& b : net_.blocks) {
        const std::string p = "blocks." + std::to_string(b.shape.index) + ".mobile_inverted_conv.";
        if (!b.shape.fused) {
            convBn(p + "inverted_bottleneck.", b.ib);
            convBn(p + "depth_conv.", b.dw);
            if (b.se_reduce_w.defined()) {
                sd.emplace_back(p + "depth_conv.se.fc.reduce.weight", b.se_reduce_w.detach());
                sd.emplace_back(p + "depth_conv.se.fc.reduce.bias", b.se_reduce_b.detach());
                sd.emplace_back(p + "depth_conv.se.fc.expand.weight", b.se_expand_w.detach());
                sd.emplace_back(p + "depth_conv.se.fc.expand.bias", b.se_expand_b.detach());
            }
        }
        convBn(p + "point_linear.", b.pl);
    }
    convBn("feature_mix_layer.", net_.mix);
    sd.emplace_back("classifier.linear.weight", net_.fc_w.detach());
    sd.emplace_back("classifier.linear.bias", net_.fc_b.detach());
    return sd;
}

std::int64_t Subnet::parameterCount() const
{
    std::int64_t n = 0;
    for (const auto& kv : stateDict()) {
        const std::string& k = kv.first;
        if (k.find("running_") != std::string::npos || k.find("num_batches_tracked") != std::string::npos) continue;
        n += kv.second.numel();
    }
    return n;
}

void Subnet::save(const std::string& path) const
{
    saveStateDict(path, stateDict(), true);
}

torch::nn::Module& Subnet::module()
{
    if (!module_) {
        module_ = std::make_shared<torch::nn::Module>("Subnet");
        for (const auto& kv : stateDict()) {
            const bool buffer = kv.first.find("running_") != std::string::npos ||
                                kv.first.find("num_batches_tracked") != std::string::npos;
            registerPath(*module_, kv.first, kv.second, buffer);
        }
    }
    return *module_;
}

void Subnet::replaceWeights(NetWeights weights)
{
    net_ = std::move(weights);
    module_.reset();
}

void Subnet::setFolded(bool folded)
{
    if (folded) foldBn(net_);
    else unfoldBn(net_);
}

}  // namespace tinyscope
