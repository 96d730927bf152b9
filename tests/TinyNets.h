#pragma once
// Small networks in tiny-training's layout (conv with bias, no BN, the activation folded into the
// int8 clamp) for tests that lower, train or export: test_autodiff, test_finetune.
#include "zoo/NetworkBuilder.h"

#include <string>

namespace tinyscope::test {

// stem 3×3/s2 → residual block (pw1, depthwise 3×3, pw2, add) → block with a stride-2 depthwise
// → global pool → classifier. 8 convs: the tiny-training layout in miniature.
inline Network tinyResidualNet(bool squeezeExcite = false)
{
    NetworkBuilder b("tiny-residual", {3, 12, 12});
    auto conv = [&](int from, const char* name, const char* role, const std::string& prefix, int block, int cout, int k,
                    int stride, int groups, Activation act) {
        return b.conv(from, ConvSpec::of(name, role, prefix, block, cout, k, stride, groups, act).withBias());
    };
    int x = conv(-1, "stem", "stem", "v0", -1, 8, 3, 2, 1, Activation::ReLU6);
    int y = conv(x, "b1.pw1", "pw1", "v1_conv_0", 0, 16, 1, 1, 1, Activation::ReLU6);
    y = conv(y, "b1.dw", "dw", "v1_conv_1", 0, 16, 3, 1, 16, Activation::ReLU6);
    if (squeezeExcite) {
        int gte = b.globalAvgPool(y, "b1.se.pool");
        gte = conv(gte, "b1.se.reduce", "se_reduce", "v1_conv_2", 0, 4, 1, 1, 1, Activation::ReLU6);
        gte = conv(gte, "b1.se.expand", "se_expand", "v1_conv_3", 0, 16, 1, 1, 1, Activation::HSigmoid);
        y = b.channelScale(gte, y, "b1.se.scale", "v1_qmul", 0);
    }
    y = conv(y, "b1.pw2", "pw2", squeezeExcite ? "v1_conv_4" : "v1_conv_2", 0, 8, 1, 1, 1, Activation::None);
    x = b.add(x, y, "b1.add", "v1_qadd", 0);
    y = conv(x, "b2.pw1", "pw1", "v2_conv_0", 1, 16, 1, 1, 1, Activation::ReLU6);
    y = conv(y, "b2.dw", "dw", "v2_conv_1", 1, 16, 3, 2, 16, Activation::ReLU6);
    y = conv(y, "b2.pw2", "pw2", "v2_conv_2", 1, 8, 1, 1, 1, Activation::None);
    x = b.globalAvgPool(y, "pool");
    b.conv(x, ConvSpec::of("classifier", "classifier", "v3", -1, 4).asLinear());
    return b.finish(4, LossKind::CrossEntropy, "test network", "tests");
}

}  // namespace tinyscope::test
