#include "space/SubnetLayout.h"

#include "space/SubnetConfig.h"

namespace tinyscope {

void layoutSubnet(const DesignSpace& space, const SubnetConfig& config, SubnetLayout& out)
{
    const WidthSet& w = space.widths[static_cast<std::size_t>(config.wid)];
    out.resolution = config.image_size;
    out.first_conv = w.first_conv;
    out.h1 = convOutSize(config.image_size, 2);
    out.n_classes = space.n_classes;
    out.feature_mix = w.feature_mix;

    BlockShape& b0 = out.blocks[0];
    b0 = BlockShape{};
    b0.index = 0;
    b0.cin = w.first_conv;
    b0.cout = w.block0;
    b0.hin = b0.hout = out.h1;
    b0.fused = true;

    int n = 1;
    int cin = w.block0;
    int h = out.h1;
    for (int s = 0; s < space.numStages(); ++s) {
        const StageSpec& st = space.stages[static_cast<std::size_t>(s)];
        const int cout = w.stages[static_cast<std::size_t>(s)];
        const int depth = config.activeDepth(space, s);
        for (int j = 0; j < depth; ++j) {
            const int sb = st.first_block + j;  // index into ks / e
            BlockShape& b = out.blocks[static_cast<std::size_t>(n)];
            b.index = n;
            b.supernet_block = sb + 1;
            b.stage = s;
            b.j = j;
            b.cin = cin;
            b.cout = cout;
            b.kernel = config.ks[static_cast<std::size_t>(sb)];
            b.expand = config.e[static_cast<std::size_t>(sb)];
            b.mid = cin * b.expand;
            b.stride = j == 0 ? st.stride : 1;
            b.hin = h;
            b.hout = convOutSize(h, b.stride);
            // SE reduce width: block input channels / 4 (= mid / (4·e)); this is what the lab's
            // extracted subnets contain (see docs/DESIGN_SPACE.md).
            b.se_mid = st.se[static_cast<std::size_t>(j)] ? cin / 4 : 0;
            b.residual = j > 0;
            b.fused = false;
            cin = cout;
            h = b.hout;
            ++n;
        }
    }
    out.n_blocks = n;
    out.last_channels = cin;
    out.hf = h;
}

}  // namespace tinyscope
