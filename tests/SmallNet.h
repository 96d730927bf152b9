#pragma once
// Shared by test_quantize and slow_quantize_accuracy: a small network trained on Fashion-MNIST.
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/quantize/ZooModule.h"
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

// Training batch `step` of 32 Fashion-MNIST fit images (items (step·32 + i)·5 mod 55,000).
inline Batch fitBatch(const ImageDataset& fit, int step)
{
    constexpr int batch = 32;
    std::vector<std::size_t> items(batch);
    for (int i = 0; i < batch; ++i) items[static_cast<std::size_t>(i)] = static_cast<std::size_t>((step * batch + i) * 5 % 55000);
    return loadBatch(fit, items, 28);
}

inline at::Tensor crossEntropyOf(ZooModule& m, const Batch& b)
{
    const at::Tensor labels = torch::tensor(std::vector<std::int64_t>(b.labels.begin(), b.labels.end()));
    return torch::cross_entropy_loss(m->forward(batchTensor(b)), labels);
}

// Adam (lr 0.003) over fit batches 0..steps-1; leaves the module in eval mode.
inline void trainSmallNet(ZooModule& m, const ImageDataset& fit, int steps)
{
    torch::optim::Adam opt(m->parameters(), torch::optim::AdamOptions(0.003));
    m->train();
    for (int s = 0; s < steps; ++s) {
        opt.zero_grad();
        crossEntropyOf(m, fitBatch(fit, s)).backward();
        opt.step();
    }
    m->eval();
}

// The trained module quantized to int8, calibrated on `calibImages` holdout images spread over the
// first 5,000.
inline PreparedModel quantizedSmallNet(const Network& net, ZooModule& m, int calibImages)
{
    PreparedModel pm;
    pm.network = net;
    auto fm = std::make_shared<FloatModel>(floatModelFromZoo(*m));
    std::unique_ptr<ImageDataset> hold = openDataset("fashion-mnist:holdout");
    std::vector<std::size_t> items(static_cast<std::size_t>(calibImages));
    for (std::size_t i = 0; i < items.size(); ++i) items[i] = i * (5000 / items.size());
    pm.params = quantizeModel(*fm, batchTensor(loadBatch(*hold, items, 28)));
    pm.float_model = fm;
    pm.calib_images = calibImages;
    return pm;
}

}  // namespace tinyscope::test
