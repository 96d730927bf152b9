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

OneDnnSubnet::OneDnnSubnet(const Subnet& subnet, OneDnnDtype dtype) : net_(foldedSubnet(subnet.weights())), dtype_(dtype) {}

OneDnnSubnet::OneDnnSubnet(FoldedSubnet net, OneDnnDtype dtype) : net_(std::move(net)), dtype_(dtype) {}

OneDnnSubnet::~OneDnnSubnet() = default;

OneDnnPlan& OneDnnSubnet::prepare(int batch, int part)
{
    const auto key = std::make_pair(batch, part);
    auto it = plans_.find(key);
    if (it == plans_.end()) it = plans_.emplace(key, std::make_unique<OneDnnPlan>(net_, batch, dtype_)).first;
    return *it->second;
}

using onednn::partSize;

void OneDnnSubnet::prepareFor(int n, int threads)
{
    const int parts = std::max(1, std::min(threads, n));
    for (int p = 0; p < parts; ++p) prepare(partSize(n, parts, p), p);
}

void OneDnnSubnet::forward(const float* images, int n, float* logits)
{
    // torchThreads() also sets this thread's OpenMP thread count to LibTorch's setting on first use
    // (ATen's lazy per-thread init); OneDnnPlan::run sets it explicitly for every run.
    const int threads = torchThreads();
    const int parts = std::max(1, std::min(threads, n));
    prepareFor(n, threads);
    if (parts == 1) {
        prepare(n, 0).run(images, logits);
        return;
    }
    const std::size_t imageFloats = static_cast<std::size_t>(3) * resolution() * resolution();
    std::vector<int> first(static_cast<std::size_t>(parts) + 1, 0);
    for (int p = 0; p < parts; ++p) first[p + 1] = first[p] + partSize(n, parts, p);
    if (!pool_ || pool_->threads() != parts) pool_ = std::make_unique<ShardPool>(parts);
    pool_->run(parts, [&](int p) {
        const std::size_t at = static_cast<std::size_t>(first[p]);
        prepare(first[p + 1] - first[p], p).run(images + at * imageFloats, logits + at * static_cast<std::size_t>(classes()));
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
