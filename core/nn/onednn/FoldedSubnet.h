#pragma once
// An extracted subnet for inference as plain float arrays: BN folded into every conv (weight and
// bias), the SE and classifier weights, in forward order — what an inference engine outside
// LibTorch (nn/onednn's OneDnnPlan) builds from. Torch-free; foldedSubnet() reads the tensors.
#include "space/SubnetLayout.h"

#include <cstddef>
#include <vector>

namespace tinyscope {

struct NetWeights;

struct FoldedConv {
    int cin = 0, cout = 0, kernel = 1, stride = 1, groups = 1;
    std::vector<float> weight;   // OIHW: cout × cin/groups × kernel × kernel
    std::vector<float> bias;     // cout (the folded BN)
};

struct FoldedBlock {
    BlockShape shape;
    FoldedConv ib, dw, pl;       // ib and dw empty for the fused block 0 (pl only, no activation)
    // SE (shape.se_mid > 0): reduce se_mid × mid, expand mid × se_mid (row-major), their biases.
    std::vector<float> se_reduce_w, se_reduce_b, se_expand_w, se_expand_b;
};

struct FoldedSubnet {
    SubnetLayout layout;
    FoldedConv first;
    std::vector<FoldedBlock> blocks;
    FoldedConv mix;
    int classes = 0;
    std::vector<float> fc_w, fc_b;   // classes × feature_mix, classes
};

// The largest activation of one image anywhere in the forward pass, in values (channels × h × w):
// what one of a plan's activation buffers holds per image.
std::size_t largestActivation(const FoldedSubnet& net);
// The same over blocks [from, to) only: with from = 0 also the input and the first conv's output,
// with to = blocks.size() also the feature mix layer's (a two-stage plan's head and tail, OneDnnPlan.h).
std::size_t largestActivation(const FoldedSubnet& net, std::size_t from, std::size_t to);

// BN folded exactly as foldBn (nn/supernet/SubnetWeights) folds it: uses the net's folded weights
// when present, folds a copy otherwise (the net is not changed).
FoldedSubnet foldedSubnet(const NetWeights& net);

// The same subnet with BN left out of its convs, for BN re-calibration on oneDNN
// (OneDnnCalibration.h): `net`'s convs hold their own weights and a zero bias, `bn` each BN's
// affine weight and bias in forward order (forEachConvBn's: the first conv, per block ib, dw, pl —
// pl only for the fused block 0 — then the feature mix), `eps` their epsilon.
struct BnAffine {
    std::vector<float> weight, bias;
};
struct UnfoldedSubnet {
    FoldedSubnet net;
    std::vector<BnAffine> bn;
    double eps = 1e-3;
};
UnfoldedSubnet unfoldedSubnet(const NetWeights& net);

}  // namespace tinyscope
