#include "nn/onednn/FoldedSubnet.h"

#include "nn/supernet/SubnetWeights.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace tinyscope {

namespace {

std::vector<float> floats(const at::Tensor& t)
{
    const at::Tensor c = t.detach().to(at::kFloat).contiguous();
    const float* p = c.data_ptr<float>();
    return std::vector<float>(p, p + c.numel());
}

// The conv of `w` (OIHW) as c has it, and `bias` (undefined: left empty).
FoldedConv convOf(const ConvBn& c, const at::Tensor& w, const at::Tensor& bias)
{
    FoldedConv f;
    f.cout = static_cast<int>(w.size(0));
    f.cin = static_cast<int>(w.size(1)) * c.groups;
    f.kernel = static_cast<int>(w.size(2));
    f.stride = c.stride;
    f.groups = c.groups;
    f.weight = floats(w);
    if (bias.defined()) f.bias = floats(bias);
    return f;
}

FoldedConv folded(const ConvBn& c) { return convOf(c, c.folded_weight, c.folded_bias); }

// The subnet's structure with each ConvBn given by conv(c), called in forward order.
template <class Conv>
FoldedSubnet subnetWith(const NetWeights& net, Conv&& conv)
{
    FoldedSubnet s;
    s.layout = net.layout;
    s.first = conv(net.first);
    for (const BlockWeights& b : net.blocks) {
        FoldedBlock f;
        f.shape = b.shape;
        if (!b.shape.fused) {
            f.ib = conv(b.ib);
            f.dw = conv(b.dw);
            if (b.se_reduce_w.defined()) {
                f.se_reduce_w = floats(b.se_reduce_w);
                f.se_reduce_b = floats(b.se_reduce_b);
                f.se_expand_w = floats(b.se_expand_w);
                f.se_expand_b = floats(b.se_expand_b);
            }
        }
        f.pl = conv(b.pl);
        s.blocks.push_back(std::move(f));
    }
    s.mix = conv(net.mix);
    s.classes = static_cast<int>(net.fc_w.size(0));
    s.fc_w = floats(net.fc_w);
    s.fc_b = floats(net.fc_b);
    return s;
}

}  // namespace

FoldedSubnet foldedSubnet(const NetWeights& given)
{
    at::NoGradGuard guard;
    NetWeights net = given;   // tensor handles: folding the copy leaves `given` as it was
    if (!net.first.folded_weight.defined()) foldBn(net);
    return subnetWith(net, folded);
}

UnfoldedSubnet unfoldedSubnet(const NetWeights& net)
{
    at::NoGradGuard guard;
    UnfoldedSubnet u;
    u.eps = net.bn_eps;
    u.net = subnetWith(net, [&](const ConvBn& c) {
        u.bn.push_back({floats(c.bn.weight), floats(c.bn.bias)});
        FoldedConv f = convOf(c, c.weight, at::Tensor());
        f.bias.assign(static_cast<std::size_t>(f.cout), 0.f);   // the BN's shift comes after the statistics
        return f;
    });
    return u;
}

std::size_t largestActivation(const FoldedSubnet& net)
{
    return largestActivation(net, 0, net.blocks.size());
}

std::size_t largestActivation(const FoldedSubnet& net, std::size_t from, std::size_t to)
{
    const SubnetLayout& L = net.layout;
    std::size_t most = 0;
    auto grow = [&](int c, int h) { most = std::max(most, static_cast<std::size_t>(c) * h * h); };
    if (from == 0) {
        grow(3, L.resolution);
        grow(net.first.cout, L.h1);
    }
    for (std::size_t i = from; i < std::min(to, net.blocks.size()); ++i) {
        const BlockShape& b = net.blocks[i].shape;
        grow(b.cin, b.hin);
        grow(b.mid, b.hin);
        grow(b.mid, b.hout);
        grow(b.cout, b.hout);
    }
    if (to >= net.blocks.size()) grow(net.mix.cout, L.hf);
    return most;
}

}  // namespace tinyscope
