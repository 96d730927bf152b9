#pragma once
// Shared by test_quantize and slow_quantize_accuracy: a small network trained on Fashion-MNIST.
#include "data/BatchLoader.h"
#include "zoo/NetworkBuilder.h"

#include <torch/torch.h>

namespace tinyscope::test {

// A small MCU-style network for Fashion-MNIST at 28x28: stem, an inverted residual block, a
// stride-2 block, pooling, classifier (BN after every conv, ReLU6).
inline Network smallNet()
{
    NetworkBuilder b("small-fmnist", {3, 28, 28});
    auto conv = [&](int from, const char* name, const char* role, const char* prefix, int block, int cout, int k, int stride, int groups, Activation act) {
        return b.conv(from, ConvSpec::of(name, role, prefix, block, cout, k, stride, groups, act).withBn());
    };
    int x = conv(-1, "stem", "stem", "v0", -1, 16, 3, 2, 1, Activation::ReLU6);
    int y = conv(x, "b1.pw1", "pw1", "v1_conv_0", 0, 32, 1, 1, 1, Activation::ReLU6);
    y = conv(y, "b1.dw", "dw", "v1_conv_1", 0, 32, 3, 1, 32, Activation::ReLU6);
    y = conv(y, "b1.pw2", "pw2", "v1_conv_2", 0, 16, 1, 1, 1, Activation::None);
    x = b.add(x, y, "b1.add", "v1_qadd", 0);
    y = conv(x, "b2.pw1", "pw1", "v2_conv_0", 1, 48, 1, 1, 1, Activation::ReLU6);
    y = conv(y, "b2.dw", "dw", "v2_conv_1", 1, 48, 3, 2, 48, Activation::ReLU6);
    y = conv(y, "b2.pw2", "pw2", "v2_conv_2", 1, 32, 1, 1, 1, Activation::None);
    x = b.globalAvgPool(y, "pool");
    b.conv(x, ConvSpec::of("classifier", "classifier", "v3", -1, 10).asLinear());
    return b.finish(10, LossKind::CrossEntropy, "test network", "tests");
}

inline at::Tensor batchTensor(const Batch& b)
{
    return torch::from_blob(const_cast<float*>(b.pixels.data()), {static_cast<long>(b.size()), 3, b.resolution, b.resolution}).clone();
}

}  // namespace tinyscope::test
