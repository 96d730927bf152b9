#pragma once
// The concrete network of a subnet: every block's channels, kernel, stride and feature-map
// sizes, resolved from a DesignSpace and a SubnetConfig. Plain data in fixed-size storage
// (no allocation) so the cost model can run in well under a microsecond.
#include "space/DesignSpace.h"

#include <array>

namespace tinyscope {

struct SubnetConfig;

// Output size of a k×k conv with padding k//2 (or of a stride-s pooling): floor((h-1)/s)+1.
inline int convOutSize(int h, int stride) { return (h - 1) / stride + 1; }

// The taps of a k×k conv (padding k//2) that can meet data on an h×h map. A stride-1 conv on a
// map with 2h-1 < k only ever multiplies the centre (2h-1)×(2h-1) taps with data; the rest meet
// zero padding, so cropping the kernel to them (padding h-1) gives the same result exactly and
// skips most of the work of 7×7 depthwise convs on 1×1-4×4 maps.
struct KernelWindow {
    int size = 0;    // taps per side used
    int start = 0;   // first tap used, per side
    int pad = 0;     // padding of the (cropped) conv
    bool cropped(int kernel) const { return size < kernel; }
};

inline KernelWindow kernelWindow(int kernel, int stride, int h)
{
    if (stride == 1 && 2 * h - 1 < kernel) return {2 * h - 1, kernel / 2 - (h - 1), h - 1};
    return {kernel, 0, kernel / 2};
}

struct BlockShape {
    int index = 0;      // position in the extracted subnet (its `blocks.N`; 0 = fused first block)
    int supernet_block = 0;  // index in the supernet (block b+1 owns ks[b], e[b])
    int stage = -1;     // -1 for block 0
    int j = 0;          // position inside the stage
    int cin = 0, mid = 0, cout = 0;
    int kernel = 1, expand = 0, stride = 1;
    int hin = 0, hout = 0;
    int se_mid = 0;     // SE reduce channels, 0 without SE
    bool residual = false;
    bool fused = false; // block 0: pointwise conv only
};

struct SubnetLayout {
    int resolution = 0;
    int first_conv = 0;      // stem output channels
    int h1 = 0;              // stem output size
    int n_blocks = 0;        // including block 0
    std::array<BlockShape, DesignSpace::kMaxBlocks> blocks{};
    int last_channels = 0;   // input of the feature mix
    int hf = 0;              // final feature-map size
    int feature_mix = 0;
    int n_classes = 0;

    const BlockShape& block(int i) const { return blocks[static_cast<std::size_t>(i)]; }
};

// Resolves the network of `config` (assumed valid for `space`).
void layoutSubnet(const DesignSpace& space, const SubnetConfig& config, SubnetLayout& out);

}  // namespace tinyscope
