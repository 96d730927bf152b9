#include "zoo/SubnetNetwork.h"

#include "space/SubnetLayout.h"
#include "zoo/NetworkBuilder.h"

namespace tinyscope {

Network networkFromSubnet(const DesignSpace& space, const SubnetConfig& config, const std::string& name)
{
    config.validate(space, name);
    SubnetLayout L;
    layoutSubnet(space, config, L);
    return networkFromLayout(L, space.name, name);
}

Network networkFromLayout(const SubnetLayout& L, const std::string& spaceName, const std::string& name)
{
    NetworkBuilder b(name, {3, L.resolution, L.resolution});
    auto conv = [&](int from, const std::string& lname, const std::string& role, const std::string& prefix, int block,
                    int cout, int k, int stride, int groups, Activation act) {
        return b.conv(from, ConvSpec::of(lname, role, prefix, block, cout, k, stride, groups, act).withBn());
    };
    int x = conv(-1, "first_conv", "stem", "v0", -1, L.first_conv, 3, 2, 1, Activation::ReLU6);
    for (int i = 0; i < L.n_blocks; ++i) {
        const BlockShape& s = L.block(i);
        const std::string n = "blocks." + std::to_string(i) + ".", v = "v" + std::to_string(i + 1);
        int j = 0;   // conv number inside the block (tiny-training's `_conv_<j>` naming)
        auto prefix = [&] { return v + "_conv_" + std::to_string(j++); };
        if (s.fused) {
            x = conv(x, n + "pw", "pw2", prefix(), i, s.cout, 1, 1, 1, Activation::None);
            continue;
        }
        const int in = x;
        int y = conv(x, n + "pw1", "pw1", prefix(), i, s.mid, 1, 1, 1, Activation::ReLU6);
        y = conv(y, n + "dw", "dw", prefix(), i, s.mid, s.kernel, s.stride, s.mid, Activation::ReLU6);
        if (s.se_mid > 0) {
            int g = b.globalAvgPool(y, n + "se.pool");
            g = b.conv(g, ConvSpec::of(n + "se.reduce", "se_reduce", prefix(), i, s.se_mid, 1, 1, 1, Activation::ReLU6).withBias());
            g = b.conv(g, ConvSpec::of(n + "se.expand", "se_expand", prefix(), i, s.mid, 1, 1, 1, Activation::HSigmoid).withBias());
            y = b.channelScale(g, y, n + "se.scale", v + "_qmul", i);
        }
        y = conv(y, n + "pw2", "pw2", prefix(), i, s.cout, 1, 1, 1, Activation::None);
        if (s.residual) y = b.add(in, y, n + "add", v + "_qadd", i);
        x = y;
    }
    const std::string mix = "v" + std::to_string(L.n_blocks + 1), cls = "v" + std::to_string(L.n_blocks + 2);
    x = conv(x, "feature_mix", "feature_mix", mix, -1, L.feature_mix, 1, 1, 1, Activation::ReLU6);
    x = b.globalAvgPool(x, "pool");
    b.conv(x, ConvSpec::of("classifier", "classifier", cls, -1, L.n_classes).asLinear());
    return b.finish(L.n_classes, LossKind::CrossEntropy, spaceName + " subnet at " + std::to_string(L.resolution) + "x" +
                                                          std::to_string(L.resolution),
                    "design space " + spaceName);
}

}  // namespace tinyscope
