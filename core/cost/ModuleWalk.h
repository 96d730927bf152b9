#pragma once
// The modules of a subnet in execution order, exactly as the lab's PyTorch subnet lists them
// (conv, bn, act, SE, shortcut, ...), produced from a SubnetLayout without building tensors.
// Both the fast cost summary and the per-layer report are visitors of this one walk.
#include "space/SubnetLayout.h"

#include <string>

namespace tinyscope {

enum class ModuleType { Conv2d, BatchNorm2d, ReLU6, Hsigmoid, Identity, Linear };

enum class ModuleSite {
    FirstConv,
    InvertedBottleneck,
    DepthConv,
    SeReduce,
    SeRelu,
    SeExpand,
    SeHsigmoid,
    PointLinear,
    Shortcut,
    FeatureMix,
    Classifier,
};

struct ModuleEvent {
    ModuleType type;
    ModuleSite site;
    int block = -1;       // block index for block modules
    int cin = 0, cout = 0;
    int kernel = 1, stride = 1, groups = 1;
    int hin = 0, hout = 0;   // 0 for Linear (2-D tensors)
    bool bias = false;
};

// Peak-activation term of one stage of the network (lab convention: elements of the tensors
// alive while a block runs; 1 element = 1 byte at int8).
struct PeakEvent {
    int block = -1;           // -1: not a block (see site)
    ModuleSite site;          // FirstConv, PointLinear (blocks), FeatureMix, Classifier
    long long elements = 0;   // the term (max of the sub-terms)
    long long ib = 0, dw = 0, pl = 0, residual = 0;
};

const char* moduleTypeName(ModuleType t);
std::string moduleName(const ModuleEvent& m);     // "blocks.3.mobile_inverted_conv.depth_conv.conv"
std::string peakTermName(const PeakEvent& p);     // "blocks.3", "first_conv", ...

template <class Visitor>
void walkModules(const SubnetLayout& L, Visitor&& v)
{
    auto convBnAct = [&](ModuleSite site, int block, int cin, int cout, int k, int stride, int groups, int hin,
                         bool act) {
        const int hout = convOutSize(hin, stride);
        v.module(ModuleEvent{ModuleType::Conv2d, site, block, cin, cout, k, stride, groups, hin, hout, false});
        v.module(ModuleEvent{ModuleType::BatchNorm2d, site, block, cout, cout, 1, 1, 1, hout, hout, false});
        if (act) v.module(ModuleEvent{ModuleType::ReLU6, site, block, cout, cout, 1, 1, 1, hout, hout, false});
    };
    convBnAct(ModuleSite::FirstConv, -1, 3, L.first_conv, 3, 2, 1, L.resolution, true);
    for (int i = 0; i < L.n_blocks; ++i) {
        const BlockShape& b = L.block(i);
        if (b.fused) {
            convBnAct(ModuleSite::PointLinear, b.index, b.cin, b.cout, 1, 1, 1, b.hin, false);
            continue;
        }
        convBnAct(ModuleSite::InvertedBottleneck, b.index, b.cin, b.mid, 1, 1, 1, b.hin, true);
        convBnAct(ModuleSite::DepthConv, b.index, b.mid, b.mid, b.kernel, b.stride, b.mid, b.hin, true);
        if (b.se_mid > 0) {
            v.module(ModuleEvent{ModuleType::Conv2d, ModuleSite::SeReduce, b.index, b.mid, b.se_mid, 1, 1, 1, 1, 1, true});
            v.module(ModuleEvent{ModuleType::ReLU6, ModuleSite::SeRelu, b.index, b.se_mid, b.se_mid, 1, 1, 1, 1, 1, false});
            v.module(ModuleEvent{ModuleType::Conv2d, ModuleSite::SeExpand, b.index, b.se_mid, b.mid, 1, 1, 1, 1, 1, true});
            v.module(ModuleEvent{ModuleType::Hsigmoid, ModuleSite::SeHsigmoid, b.index, b.mid, b.mid, 1, 1, 1, 1, 1, false});
        }
        convBnAct(ModuleSite::PointLinear, b.index, b.mid, b.cout, 1, 1, 1, b.hout, false);
        if (b.residual)
            v.module(ModuleEvent{ModuleType::Identity, ModuleSite::Shortcut, b.index, b.cout, b.cout, 1, 1, 1, b.hout, b.hout, false});
    }
    convBnAct(ModuleSite::FeatureMix, -1, L.last_channels, L.feature_mix, 1, 1, 1, L.hf, true);
    v.module(ModuleEvent{ModuleType::Linear, ModuleSite::Classifier, -1, L.feature_mix, L.n_classes, 1, 1, 1, 0, 0, true});
}

template <class Visitor>
void walkPeakTerms(const SubnetLayout& L, Visitor&& v)
{
    auto sq = [](int h) { return static_cast<long long>(h) * h; };
    const long long r2 = sq(L.resolution), h12 = sq(L.h1);
    {
        PeakEvent p{-1, ModuleSite::FirstConv};
        p.elements = 3 * r2 + L.first_conv * h12;
        v.peak(p);
    }
    for (int i = 0; i < L.n_blocks; ++i) {
        const BlockShape& b = L.block(i);
        PeakEvent p{b.index, ModuleSite::PointLinear};
        const long long hi = sq(b.hin), ho = sq(b.hout);
        if (b.fused) {
            p.pl = static_cast<long long>(b.cin + b.cout) * hi;
        } else if (b.residual) {
            p.ib = static_cast<long long>(b.cin + b.mid) * hi;
            p.dw = 2LL * b.mid * hi;
            p.residual = static_cast<long long>(b.cin) * hi;
            p.pl = static_cast<long long>(b.mid + b.cout) * ho;
        } else {
            p.ib = static_cast<long long>(b.cin + b.mid) * hi;
            p.dw = static_cast<long long>(b.mid) * (hi + ho);
            p.pl = static_cast<long long>(b.mid + b.cout) * ho;
        }
        long long dwTerm = p.dw + p.residual;
        p.elements = p.ib > dwTerm ? p.ib : dwTerm;
        if (p.pl > p.elements) p.elements = p.pl;
        v.peak(p);
    }
    {
        PeakEvent p{-1, ModuleSite::FeatureMix};
        p.elements = static_cast<long long>(L.last_channels + L.feature_mix) * sq(L.hf);
        v.peak(p);
    }
    {
        PeakEvent p{-1, ModuleSite::Classifier};
        p.elements = L.feature_mix + L.n_classes;
        v.peak(p);
    }
}

}  // namespace tinyscope
