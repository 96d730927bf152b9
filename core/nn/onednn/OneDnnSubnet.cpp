#include "nn/onednn/OneDnnSubnet.h"

#include "Error.h"
#include "nn/TorchRuntime.h"
#include "nn/supernet/Supernet.h"

#include <ATen/ATen.h>

namespace tinyscope {

OneDnnSubnet::OneDnnSubnet(const Subnet& subnet) : net_(foldedSubnet(subnet.weights())) {}

OneDnnSubnet::OneDnnSubnet(FoldedSubnet net) : net_(std::move(net)) {}

OneDnnPlan& OneDnnSubnet::prepare(int batch)
{
    auto it = plans_.find(batch);
    if (it == plans_.end()) it = plans_.emplace(batch, std::make_unique<OneDnnPlan>(net_, batch)).first;
    return *it->second;
}

void OneDnnSubnet::forward(const float* images, int n, float* logits)
{
    // torchThreads() also sets this thread's OpenMP thread count to LibTorch's setting on first use
    // (ATen's lazy per-thread init); OneDnnPlan::run sets it explicitly again.
    prepare(n).run(images, logits, torchThreads());
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
