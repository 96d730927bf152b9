#pragma once
// Any zoo Network as a LibTorch module with initial weights (PyTorch's default initialisation,
// seeded), float32: conv (+ BN + activation), residual adds, pooling, squeeze-excite, and the
// transformer pieces of CCT. Later steps quantize and train it. Includes torch: only for the
// translation units that build modules.
#include "zoo/Network.h"

#include <torch/torch.h>

#include <vector>

namespace tinyscope {

class ZooModuleImpl : public torch::nn::Module {
public:
    ZooModuleImpl(const Network& net, std::uint64_t seed);

    // x: [N, C, H, W] (the autoencoder: [N, 640, 1, 1]); returns the head's output [N, K].
    torch::Tensor forward(const torch::Tensor& x);
    // Same, also returning every layer's output (for shape checks and tracing).
    torch::Tensor forward(const torch::Tensor& x, std::vector<torch::Tensor>& layerOutputs);

    const Network& network() const { return net_; }

private:
    struct Slot {   // the submodules / parameters of one layer (empty where unused)
        torch::nn::Conv2d conv{nullptr};
        torch::nn::Linear linear{nullptr};
        torch::nn::BatchNorm2d bn{nullptr};
        torch::nn::LayerNorm norm{nullptr};
        torch::Tensor param;   // position embedding / extra bias
    };
    torch::Tensor activate(const torch::Tensor& x, Activation a) const;
    Network net_;
    std::vector<Slot> slots_;
};
TORCH_MODULE(ZooModule);

}  // namespace tinyscope
