#include "space/SupernetSchema.h"

#include <algorithm>
#include <functional>

namespace tinyscope {

std::string supernetBlockPrefix(int b) { return "blocks." + std::to_string(b) + ".mobile_inverted_conv."; }

std::string kernelTransformName(int from, int to)
{
    return std::to_string(from) + "to" + std::to_string(to) + "_matrix";
}

SupernetSchema supernetSchema(const DesignSpace& space)
{
    SupernetSchema s;
    auto maxOver = [&](const std::function<int(const WidthSet&)>& f) {
        int m = 0;
        for (const WidthSet& w : space.widths) m = std::max(m, f(w));
        return m;
    };
    s.max_first = maxOver([](const WidthSet& w) { return w.first_conv; });
    s.max_block0 = maxOver([](const WidthSet& w) { return w.block0; });
    s.feature_mix = maxOver([](const WidthSet& w) { return w.feature_mix; });
    s.max_kernel = *std::max_element(space.ks_list.begin(), space.ks_list.end());
    const int maxE = *std::max_element(space.expand_list.begin(), space.expand_list.end());

    auto add = [&](const std::string& key, std::vector<std::int64_t> shape, bool buffer = false) {
        s.entries.push_back(SchemaEntry{key, std::move(shape), buffer, false});
    };
    auto bn = [&](const std::string& prefix, int c) {
        add(prefix + "bn.bn.weight", {c});
        add(prefix + "bn.bn.bias", {c});
        add(prefix + "bn.bn.running_mean", {c}, true);
        add(prefix + "bn.bn.running_var", {c}, true);
        s.entries.push_back(SchemaEntry{prefix + "bn.bn.num_batches_tracked", {}, true, true});
    };
    std::vector<int> ks = space.ks_list;
    std::sort(ks.begin(), ks.end());

    add("first_conv.conv.conv.weight", {s.max_first, 3, 3, 3});
    bn("first_conv.", s.max_first);
    SupernetBlockSpec b0;
    b0.max_cin = s.max_first;
    b0.max_cout = s.max_block0;
    s.blocks.push_back(b0);
    add(supernetBlockPrefix(0) + "point_linear.conv.conv.weight", {s.max_block0, s.max_first, 1, 1});
    bn(supernetBlockPrefix(0) + "point_linear.", s.max_block0);

    int cin = s.max_block0;
    for (int st = 0; st < space.numStages(); ++st) {
        const StageSpec& spec = space.stages[static_cast<std::size_t>(st)];
        const int cout = maxOver([&](const WidthSet& w) { return w.stages[static_cast<std::size_t>(st)]; });
        for (int j = 0; j < spec.max_blocks; ++j) {
            SupernetBlockSpec b;
            b.index = spec.first_block + j + 1;
            b.stage = st;
            b.j = j;
            b.max_cin = cin;
            b.max_mid = cin * maxE;
            b.max_cout = cout;
            b.se = spec.se[static_cast<std::size_t>(j)];
            b.max_se = b.se ? cin / 4 : 0;
            s.blocks.push_back(b);
            const std::string p = supernetBlockPrefix(b.index);
            add(p + "inverted_bottleneck.conv.conv.weight", {b.max_mid, b.max_cin, 1, 1});
            bn(p + "inverted_bottleneck.", b.max_mid);
            for (std::size_t k = 0; k + 1 < ks.size(); ++k)
                add(p + "depth_conv.conv." + kernelTransformName(ks[k + 1], ks[k]), {ks[k] * ks[k], ks[k] * ks[k]});
            add(p + "depth_conv.conv.conv.weight", {b.max_mid, 1, s.max_kernel, s.max_kernel});
            bn(p + "depth_conv.", b.max_mid);
            if (b.se) {
                add(p + "depth_conv.se.fc.reduce.weight", {b.max_se, b.max_mid, 1, 1});
                add(p + "depth_conv.se.fc.reduce.bias", {b.max_se});
                add(p + "depth_conv.se.fc.expand.weight", {b.max_mid, b.max_se, 1, 1});
                add(p + "depth_conv.se.fc.expand.bias", {b.max_mid});
            }
            add(p + "point_linear.conv.conv.weight", {b.max_cout, b.max_mid, 1, 1});
            bn(p + "point_linear.", b.max_cout);
            cin = cout;
        }
    }
    s.max_last = cin;
    add("feature_mix_layer.conv.conv.weight", {s.feature_mix, s.max_last, 1, 1});
    bn("feature_mix_layer.", s.feature_mix);
    add("classifier.linear.linear.weight", {space.n_classes, s.feature_mix});
    add("classifier.linear.linear.bias", {space.n_classes});
    return s;
}

}  // namespace tinyscope
