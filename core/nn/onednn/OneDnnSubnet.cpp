#include "nn/onednn/OneDnnSubnet.h"

#include "Error.h"
#include "nn/ShardPool.h"
#include "nn/TorchRuntime.h"
#include "nn/onednn/OneDnnCommon.h"
#include "nn/supernet/Supernet.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

namespace tinyscope {

namespace {

// A plan runs at most this many bytes of its largest activation at once (micro-batches). Measured
// on machine A (2026-12-03, docs/ONEDNN.md "Micro-batches"): the largest VWW subnet at 160 px (2.5 MB
// per image) ran 3.3 ms per image in micro-batches of 1–2 and 3.7 ms in one batch of 16; at 96 px
// (0.9 MB) 4 images at once was best; the smallest at 96 px was as fast in 8 as in 16.
constexpr std::size_t kMicroBatchBytes = std::size_t{4} << 20;

// Two stages (OneDnnPlan.h, OneDnnStages): a tail of this many images, from the first block whose
// activations stay within kMicroBatchBytes for all of them, when its weights are at least
// kTailWeightBytes (a tail with few weights gains little from one pass serving many images and pays
// the junction's copy). Measured on machine A (2026-12-03, docs/ONEDNN.md "Two stages"): the
// largest VWW subnet at 160 px 1.06–1.09× (tails of 8 and 16 images, 15 MB of weights), at 96 px
// 1.03×; the smallest subnet (tails of 1.1–1.3 MB) 0.95–1.00×, so it keeps one stage.
constexpr int kTailBatch = 16;
constexpr std::size_t kTailWeightBytes = std::size_t{4} << 20;

// Bytes per activation value in a plan of this data type.
std::size_t valueBytes(OneDnnDtype dtype) { return dtype == OneDnnDtype::Bf16 ? 2 : 4; }

// Weights (values) of blocks [from, end) and the layers after them.
std::size_t tailWeights(const FoldedSubnet& net, std::size_t from)
{
    std::size_t values = net.mix.weight.size() + net.fc_w.size();
    for (std::size_t i = from; i < net.blocks.size(); ++i) {
        const FoldedBlock& b = net.blocks[i];
        values += b.ib.weight.size() + b.dw.weight.size() + b.pl.weight.size() + b.se_reduce_w.size() + b.se_expand_w.size();
    }
    return values;
}

}  // namespace

OneDnnSubnet::OneDnnSubnet(const Subnet& subnet, OneDnnDtype dtype, OneDnnDepthwise depthwise, OneDnnProjection projection)
    : net_(foldedSubnet(subnet.weights())), dtype_(dtype), depthwise_(depthwise), projection_(projection), microBatch_(microBatchOf(net_, dtype))
{
    chooseStages();
}

OneDnnSubnet::OneDnnSubnet(FoldedSubnet net, OneDnnDtype dtype, OneDnnDepthwise depthwise, OneDnnProjection projection)
    : net_(std::move(net)), dtype_(dtype), depthwise_(depthwise), projection_(projection), microBatch_(microBatchOf(net_, dtype))
{
    chooseStages();
}

OneDnnSubnet::~OneDnnSubnet() = default;

OneDnnPlan& OneDnnSubnet::prepare(int batch, int part)
{
    const auto key = std::make_pair(batch, part);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
        const OneDnnStages stages = batch == tailBatch_ ? stages_ : OneDnnStages{};
        it = plans_.emplace(key, std::make_unique<OneDnnPlan>(net_, batch, dtype_, depthwise_, stages, projection_)).first;
    }
    return *it->second;
}

using onednn::partSize;

int OneDnnSubnet::microBatch() const { return microBatch_; }

int OneDnnSubnet::microBatchOf(const FoldedSubnet& net, OneDnnDtype dtype)
{
    const std::size_t bytes = largestActivation(net) * valueBytes(dtype);
    return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(1 << 16, kMicroBatchBytes / std::max<std::size_t>(1, bytes))));
}

void OneDnnSubnet::chooseStages()
{
    const int m = microBatch_, tail = kTailBatch / m * m;
    if (tail < 2 * m) return;
    const std::size_t bytes = valueBytes(dtype_), blocks = net_.blocks.size();
    for (std::size_t from = 1; from < blocks; ++from) {
        if (largestActivation(net_, from, blocks) * bytes * static_cast<std::size_t>(tail) > kMicroBatchBytes) continue;
        if (tailWeights(net_, from) * bytes < kTailWeightBytes) return;
        tailBatch_ = tail;
        stages_ = OneDnnStages{m, from};
        return;
    }
}

// A part of n images: whole chunks of tailBatch_ (two stages), the rest in micro-batches.
template <class F>
void OneDnnSubnet::eachRun(int n, F&& f) const
{
    int at = 0;
    if (tailBatch_ > 0)
        for (; n - at >= tailBatch_; at += tailBatch_) f(at, tailBatch_);
    for (; at < n; at += microBatch_) f(at, std::min(microBatch_, n - at));
}

void OneDnnSubnet::prepareFor(int n, int threads)
{
    const int parts = std::max(1, std::min(threads, n));
    for (int p = 0; p < parts; ++p) eachRun(partSize(n, parts, p), [&](int, int count) { prepare(count, p); });
}

void OneDnnSubnet::runPart(const float* images, int n, float* logits, int part)
{
    const std::size_t imageFloats = static_cast<std::size_t>(3) * resolution() * resolution();
    eachRun(n, [&](int at, int count) {
        prepare(count, part).run(images + static_cast<std::size_t>(at) * imageFloats, logits + static_cast<std::size_t>(at) * classes());
    });
}

void OneDnnSubnet::forward(const float* images, int n, float* logits)
{
    // torchThreads() also sets this thread's OpenMP thread count to LibTorch's setting on first use
    // (ATen's lazy per-thread init); OneDnnPlan::run sets it explicitly for every run.
    const int threads = torchThreads();
    const int parts = std::max(1, std::min(threads, n));
    prepareFor(n, threads);
    if (parts == 1) {
        runPart(images, n, logits, 0);
        return;
    }
    const std::size_t imageFloats = static_cast<std::size_t>(3) * resolution() * resolution();
    std::vector<int> first(static_cast<std::size_t>(parts) + 1, 0);
    for (int p = 0; p < parts; ++p) first[p + 1] = first[p] + partSize(n, parts, p);
    if (!pool_ || pool_->threads() != parts) pool_ = std::make_unique<ShardPool>(parts);
    pool_->run(parts, [&](int p) {
        const std::size_t at = static_cast<std::size_t>(first[p]);
        runPart(images + at * imageFloats, first[p + 1] - first[p], logits + at * static_cast<std::size_t>(classes()), p);
    });
}

at::Tensor OneDnnSubnet::forward(const at::Tensor& images)
{
    const int r = resolution();
    if (images.dim() != 4 || images.size(1) != 3 || images.size(2) != r || images.size(3) != r)
        throw InputError("oneDNN subnet: expected n × 3 × " + std::to_string(r) + " × " + std::to_string(r) + " images");
    const at::Tensor x = images.to(at::kFloat).contiguous();
    const int n = static_cast<int>(x.size(0));
    at::Tensor logits = at::empty({n, classes()}, at::kFloat);
    forward(x.data_ptr<float>(), n, logits.data_ptr<float>());
    return logits;
}

}  // namespace tinyscope
