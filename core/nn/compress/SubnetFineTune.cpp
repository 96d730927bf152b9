#include "nn/compress/SubnetFineTune.h"

#include "Error.h"
#include "data/Augment.h"
#include "data/BatchLoader.h"
#include "io/Text.h"
#include "nn/measure/Evaluator.h"
#include "nn/supernet/Supernet.h"
#include "space/PyRandom.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>

namespace tinyscope {

namespace {

// The subnet's trainable tensors (the ones extract() made require gradients).
std::vector<at::Tensor> trainable(NetWeights& net)
{
    std::vector<at::Tensor> out;
    forEachConvBn(net, [&](ConvBn& c) {
        for (at::Tensor* t : {&c.weight, &c.bn.weight, &c.bn.bias})
            if (t->defined()) out.push_back(*t);
    });
    for (BlockWeights& b : net.blocks)
        for (at::Tensor* t : {&b.se_reduce_w, &b.se_reduce_b, &b.se_expand_w, &b.se_expand_b})
            if (t->defined()) out.push_back(*t);
    out.push_back(net.fc_w);
    out.push_back(net.fc_b);
    for (at::Tensor& t : out)
        if (!t.requires_grad()) t.set_requires_grad(true);
    return out;
}

}  // namespace

double SubnetFineTuneOptions::lrAt(std::size_t step, std::size_t steps) const
{
    const double t = schedule == LrSchedule::Lab ? static_cast<double>(step) / static_cast<double>(std::max(epochs, 1))
                                                 : static_cast<double>(step) / static_cast<double>(std::max<std::size_t>(steps, 1));
    return 0.5 * lr * (1.0 + std::cos(M_PI * t));
}

std::size_t SubnetFineTuneOptions::steps(std::size_t trainImages) const
{
    const std::size_t perEpoch = images == 0 ? trainImages : std::min(images, trainImages);
    const std::size_t b = static_cast<std::size_t>(std::max(batch, 1));
    return (perEpoch + b - 1) / b * static_cast<std::size_t>(std::max(epochs, 0));
}

void SubnetFineTuneOptions::check() const
{
    if (epochs < 0) throw InputError("fine-tuning epochs " + std::to_string(epochs) + " is negative");
    if (!(lr > 0) || !std::isfinite(lr)) throw InputError("fine-tuning learning rate " + formatFixed(lr, 4) + " is not positive");
    if (momentum < 0 || momentum >= 1) throw InputError("fine-tuning momentum " + formatFixed(momentum, 3) + " is outside [0, 1)");
    if (weight_decay < 0) throw InputError("fine-tuning weight decay " + formatFixed(weight_decay, 5) + " is negative");
    if (batch < 1) throw InputError("fine-tuning batch " + std::to_string(batch) + " is below 1");
    if (pad < 0 || pad > 16) throw InputError("fine-tuning crop padding " + std::to_string(pad) + " is outside 0–16");
}

std::vector<SubnetFineTuneEpoch> fineTuneSubnet(Subnet& sub, const ImageDataset& train, const SubnetFineTuneOptions& o,
                                                const std::function<void()>& afterStep, const std::function<double()>& evaluate,
                                                const JobControl& job)
{
    o.check();
    std::vector<SubnetFineTuneEpoch> out;
    if (o.epochs == 0) return out;
    const std::size_t perEpoch = o.images == 0 ? train.size() : std::min(o.images, train.size());
    if (perEpoch == 0) throw InputError("no training images in " + train.source());
    const std::size_t batch = static_cast<std::size_t>(o.batch);
    const std::size_t steps = o.steps(train.size());
    const std::size_t batches = steps / static_cast<std::size_t>(o.epochs);
    std::vector<at::Tensor> params = trainable(sub.weights());
    std::vector<at::Tensor> momentum;
    for (const at::Tensor& p : params) momentum.push_back(at::zeros_like(p));
    const int resolution = sub.config().image_size;
    std::size_t step = 0;
    for (int e = 0; e < o.epochs; ++e) {
        const auto started = std::chrono::steady_clock::now();
        sub.setFolded(false);
        std::vector<std::size_t> order(train.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        PyRandom rng(seedStream(o.seed, 5000 + static_cast<std::uint64_t>(e)));
        rng.shuffle(order);
        order.resize(perEpoch);
        const PadCropFlip augment{o.pad, o.flip, o.seed};
        SubnetFineTuneEpoch ep;
        ep.epoch = e + 1;
        double lossSum = 0;
        for (std::size_t b = 0; b < batches; ++b, ++step) {
            job.check();
            job.report(step, steps, "fine-tuning, epoch " + std::to_string(e + 1) + " of " + std::to_string(o.epochs));
            const std::vector<std::size_t> items(order.begin() + static_cast<std::ptrdiff_t>(b * batch),
                                                 order.begin() + static_cast<std::ptrdiff_t>(std::min(perEpoch, (b + 1) * batch)));
            Batch data = loadBatch(train, items, resolution, {}, 2,
                                   o.pad > 0 || o.flip ? augment.hook(static_cast<std::uint64_t>(e), items) : ImageAugment());
            if (data.size() == 0) continue;   // every image of the batch unreadable (loadBatch reports them)
            const at::Tensor x = batchImages(data);
            const at::Tensor y = at::from_blob(data.labels.data(), {static_cast<std::int64_t>(data.size())}, at::kInt).to(at::kLong);
            ForwardOptions fo;
            fo.bn = BnMode::Train;
            const at::Tensor loss = at::cross_entropy_loss(forwardNet(sub.weights(), x, fo), y);
            loss.backward();
            lossSum += loss.item<double>();
            const double lr = o.lrAt(step, steps);
            ep.lr = lr;
            {   // torch.optim.SGD: g += wd·p; buf = m·buf + g; p -= lr·buf
                at::NoGradGuard guard;
                for (std::size_t i = 0; i < params.size(); ++i) {
                    at::Tensor g = params[i].mutable_grad();
                    if (!g.defined()) continue;
                    if (o.weight_decay > 0) g.add_(params[i], o.weight_decay);
                    momentum[i].mul_(o.momentum).add_(g);
                    params[i].add_(momentum[i], -lr);
                    g.zero_();
                }
            }
            if (afterStep) afterStep();
        }
        ep.loss = lossSum / static_cast<double>(batches);
        if (evaluate) ep.top1 = evaluate();
        sub.setFolded(false);
        ep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        out.push_back(ep);
    }
    job.report(steps, steps, "fine-tuned");
    return out;
}

}  // namespace tinyscope
