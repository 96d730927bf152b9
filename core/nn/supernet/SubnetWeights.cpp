#include "nn/supernet/SubnetWeights.h"

#include "space/SubnetLayout.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace tinyscope {

namespace {

struct Runner {
    const NetWeights& net;
    const ForwardOptions& opt;
    int bnIndex = 0;

    void trace(const std::string& name, const at::Tensor& t)
    {
        if (opt.trace) opt.trace->emplace_back(name, t.detach().contiguous());
    }

    at::Tensor batchNorm(const at::Tensor& x, const ConvBn& c)
    {
        const BnWeights& bn = c.bn;
        const int idx = bnIndex++;
        switch (opt.bn) {
        case BnMode::Eval:
            return at::batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, false, 0.0, net.bn_eps, false);
        case BnMode::Train:
            if (bn.num_batches_tracked.defined()) bn.num_batches_tracked.add_(1);
            if (opt.sum_across_ranks) return syncBatchNorm(x, bn);
            return at::batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, true, opt.momentum, net.bn_eps,
                                  false);
        case BnMode::Calibrate: {
            at::Tensor mean = x.mean({0, 2, 3});
            at::Tensor centred = x - mean.view({1, -1, 1, 1});
            at::Tensor var = (centred * centred).mean({0, 2, 3});
            BnCalibration& cal = *opt.calibration;
            const double n = static_cast<double>(x.size(0));
            if (static_cast<int>(cal.mean_sum.size()) <= idx) {
                cal.mean_sum.push_back(mean * n);
                cal.var_sum.push_back(var * n);
            } else {
                cal.mean_sum[static_cast<std::size_t>(idx)].add_(mean, n);
                cal.var_sum[static_cast<std::size_t>(idx)].add_(var, n);
            }
            return at::batch_norm(x, bn.weight, bn.bias, mean, var, false, 0.0, net.bn_eps, false);
        }
        }
        return x;
    }

    // Batch norm over the global batch of all ranks: per-channel count, sum and sum of squares
    // (accumulated in double, so E[x^2] - E[x]^2 loses nothing that matters) summed over ranks,
    // then the same normalisation and running-statistics update as at::batch_norm's training mode.
    at::Tensor syncBatchNorm(const at::Tensor& x, const BnWeights& bn) const
    {
        const std::int64_t c = x.size(1);
        const double local = static_cast<double>(x.size(0) * x.size(2) * x.size(3));
        at::Tensor stats = at::stack({x.sum({0, 2, 3}, false, at::kDouble), (x * x).sum({0, 2, 3}, false, at::kDouble),
                                      at::full({c}, local, x.options().dtype(at::kDouble))});
        at::Tensor global = opt.sum_across_ranks(stats);
        const double n = global[2][0].item<double>();
        at::Tensor mean = global[0] / n;
        at::Tensor var = at::clamp_min(global[1] / n - mean * mean, 0.0);
        {
            at::NoGradGuard guard;
            bn.running_mean.mul_(1.0 - opt.momentum).add_(mean.to(at::kFloat), opt.momentum);
            bn.running_var.mul_(1.0 - opt.momentum).add_((var * (n / std::max(1.0, n - 1))).to(at::kFloat), opt.momentum);
        }
        at::Tensor scale = bn.weight * at::rsqrt(var + net.bn_eps).to(at::kFloat);
        at::Tensor shift = bn.bias - mean.to(at::kFloat) * scale;
        return x * scale.view({1, c, 1, 1}) + shift.view({1, c, 1, 1});
    }

    // A conv with its kernel cropped to the taps that meet data (kernelWindow, SubnetLayout.h).
    static at::Tensor conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, int stride, int groups)
    {
        const int64_t k = w.size(2), h = x.size(2);
        KernelWindow win = kernelWindow(static_cast<int>(k), stride, static_cast<int>(h));
        if (x.size(3) != h) win = {static_cast<int>(k), 0, static_cast<int>(k / 2)};   // not square: never cropped
        at::Tensor wc = w;
        if (win.cropped(static_cast<int>(k)))
            wc = w.slice(2, win.start, win.start + win.size).slice(3, win.start, win.start + win.size);
        return at::conv2d(x, wc, b, {stride, stride}, {win.pad, win.pad}, {1, 1}, groups);
    }

    at::Tensor convBn(const at::Tensor& x, const ConvBn& c, const std::string& name)
    {
        if (opt.bn == BnMode::Eval && c.folded_weight.defined()) {
            ++bnIndex;
            at::Tensor y = conv(x, c.folded_weight, c.folded_bias, c.stride, c.groups);
            trace(name, y);
            return y;
        }
        at::Tensor y = conv(x, c.weight, {}, c.stride, c.groups);
        y = batchNorm(y, c);
        trace(name, y);
        return y;
    }
};

at::Tensor clampRelu6(const at::Tensor& x) { return at::hardtanh(x, 0.0, 6.0); }

}  // namespace

at::Tensor forwardNet(const NetWeights& net, const at::Tensor& input, const ForwardOptions& opt)
{
    Runner r{net, opt};
    const at::Tensor in = input.contiguous(opt.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
    at::Tensor x = clampRelu6(r.convBn(in, net.first, "first_conv"));
    for (const BlockWeights& b : net.blocks) {
        const std::string name = "blocks." + std::to_string(b.shape.index);
        if (b.shape.fused) {
            x = r.convBn(x, b.pl, name);
            continue;
        }
        at::Tensor y = clampRelu6(r.convBn(x, b.ib, name + ".inverted_bottleneck"));
        y = clampRelu6(r.convBn(y, b.dw, name + ".depth_conv"));
        if (b.se_reduce_w.defined()) {
            at::Tensor s = y.mean({2, 3}, true);
            s = clampRelu6(at::conv2d(s, b.se_reduce_w, b.se_reduce_b));
            s = at::conv2d(s, b.se_expand_w, b.se_expand_b);
            s = clampRelu6(s + 3.0) / 6.0;   // h-sigmoid
            y = y * s;
        }
        y = r.convBn(y, b.pl, name + ".point_linear");
        x = b.shape.residual ? y + x : y;
        r.trace(name, x);
    }
    x = clampRelu6(r.convBn(x, net.mix, "feature_mix_layer"));
    x = x.mean({2, 3});
    x = at::linear(x, net.fc_w, net.fc_b);
    r.trace("classifier", x);
    return x;
}

void applyCalibration(NetWeights& net, const BnCalibration& cal)
{
    if (cal.count <= 0) return;
    std::size_t i = 0;
    at::NoGradGuard guard;
    forEachConvBn(net, [&](ConvBn& c) {
        if (i < cal.mean_sum.size()) {
            c.bn.running_mean.copy_(cal.mean_sum[i] / static_cast<double>(cal.count));
            c.bn.running_var.copy_(cal.var_sum[i] / static_cast<double>(cal.count));
        }
        ++i;
    });
}

void foldBn(NetWeights& net)
{
    at::NoGradGuard guard;
    const double eps = net.bn_eps;
    forEachConvBn(net, [&](ConvBn& c) {
        at::Tensor scale = c.bn.weight / at::sqrt(c.bn.running_var + eps);
        c.folded_weight = (c.weight * scale.view({-1, 1, 1, 1})).contiguous();
        c.folded_bias = (c.bn.bias - c.bn.running_mean * scale).contiguous();
    });
}

void unfoldBn(NetWeights& net)
{
    forEachConvBn(net, [](ConvBn& c) {
        c.folded_weight = at::Tensor();
        c.folded_bias = at::Tensor();
    });
}

}  // namespace tinyscope
