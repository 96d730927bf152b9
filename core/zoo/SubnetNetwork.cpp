#include "zoo/SubnetNetwork.h"

#include "space/SubnetLayout.h"
#include "zoo/NetworkBuilder.h"

namespace tinyscope {

Network networkFromSubnet(const DesignSpace& space, const SubnetConfig& config, const std::string& name)
{
    config.validate(space, name);
    SubnetLayout L;
    layoutSubnet(space, config, L);
    NetworkBuilder b(name, {3, L.resolution, L.resolution});
    auto conv = [&](int from, const std::string& lname, const std::string& role, const std::string& prefix, int block,
                    int cout, int k, int stride, int groups, Activation act) {
        ConvSpec s;
        s.name = lname;
        s.role = role;
        s.prefix = prefix;
        s.block = block;
        s.cout = cout;
        s.kernel(k).stride(stride);
        s.groups = groups;
        s.bn = true;
        s.act = act;
        return b.conv(from, s);
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
            ConvSpec r;
            r.name = n + "se.reduce";
            r.role = "se_reduce";
            r.prefix = prefix();
            r.block = i;
            r.cout = s.se_mid;
            r.bias = true;
            r.act = Activation::ReLU6;
            g = b.conv(g, r);
            ConvSpec e = r;
            e.name = n + "se.expand";
            e.role = "se_expand";
            e.prefix = prefix();
            e.cout = s.mid;
            e.act = Activation::HSigmoid;
            g = b.conv(g, e);
            y = b.channelScale(g, y, n + "se.scale", v + "_qmul", i);
        }
        y = conv(y, n + "pw2", "pw2", prefix(), i, s.cout, 1, 1, 1, Activation::None);
        if (s.residual) y = b.add(in, y, n + "add", v + "_qadd", i);
        x = y;
    }
    const std::string mix = "v" + std::to_string(L.n_blocks + 1), cls = "v" + std::to_string(L.n_blocks + 2);
    x = conv(x, "feature_mix", "feature_mix", mix, -1, L.feature_mix, 1, 1, 1, Activation::ReLU6);
    x = b.globalAvgPool(x, "pool");
    ConvSpec fc;
    fc.name = "classifier";
    fc.role = "classifier";
    fc.prefix = cls;
    fc.cout = L.n_classes;
    fc.bias = true;
    fc.linear = true;
    b.conv(x, fc);
    return b.finish(L.n_classes, LossKind::CrossEntropy, space.name + " subnet at " + std::to_string(L.resolution) + "x" +
                                                          std::to_string(L.resolution),
                    "design space " + space.name);
}

}  // namespace tinyscope
