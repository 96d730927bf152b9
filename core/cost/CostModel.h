#pragma once
// Closed-form efficiency model of a subnet: MACs as the lab counts them (thop 0.1.1, including
// its 4×elements BN term), MACs without BN, trainable params, peak activation bytes (lab
// convention) and flash bytes. No tensors are built; summary() takes well under a microsecond.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "space/SubnetLayout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct CostSummary {
    std::int64_t macs = 0;                  // lab's count_net_flops: convs + linear + 4·Σ BN elements
    std::int64_t macs_without_bn = 0;       // convs + linear only
    std::int64_t params = 0;                // trainable params of the extracted subnet
    std::int64_t peak_activation_bytes = 0; // lab's count_peak_activation_size (int8: element = byte)
    std::int64_t flash_bytes = 0;           // int8 weights + int32 biases after BN folding
    int peak_term = 0;                      // index of the largest term in network order

    double millionMacs() const { return static_cast<double>(macs) / 1e6; }
    double peakKB() const { return static_cast<double>(peak_activation_bytes) / 1024.0; }
    double flashKB() const { return static_cast<double>(flash_bytes) / 1024.0; }
};

struct LayerCost {
    std::string name;        // module name as in the extracted PyTorch subnet
    std::string type;        // Conv2d, BatchNorm2d, ReLU6, Hsigmoid, IdentityLayer, Linear
    std::vector<int> input_shape;   // NCHW (NC for Linear)
    std::vector<int> output_shape;
    std::int64_t macs = 0;   // as the lab counts this module (BN: 4·elements)
    std::int64_t params = 0;
    int kernel = 0, stride = 0, groups = 0;
    bool bias = false;
    int block = -1;          // block index, -1 outside blocks
};

struct PeakTerm {
    std::string name;        // "first_conv", "blocks.N", "feature_mix_layer", "classifier"
    int block = -1;
    std::int64_t elements = 0;
    std::int64_t ib = 0, dw = 0, pl = 0, residual = 0;  // sub-terms of a block
};

struct CostReport {
    CostSummary summary;
    std::vector<LayerCost> layers;
    std::vector<PeakTerm> peak_terms;   // network order
    std::string peak_layer;             // name of the largest term
    std::int64_t bn_elements = 0;
    std::int64_t conv_macs = 0;
    std::int64_t linear_macs = 0;
};

class CostModel {
public:
    explicit CostModel(const DesignSpace& space) : space_(&space) {}

    // Totals only, no allocation. `config` must be valid for the space.
    CostSummary summary(const SubnetConfig& config) const;
    // The same for a resolved network, also one no config describes (a channel-pruned subnet's
    // narrower widths).
    static CostSummary summary(const SubnetLayout& layout);
    // Totals plus per-module rows and per-block peak terms.
    CostReport report(const SubnetConfig& config) const;

    const DesignSpace& space() const { return *space_; }

private:
    const DesignSpace* space_;
};

Json toJson(const CostSummary& s);
Json toJson(const CostReport& r);   // summary fields + "layers" + "peak_terms"

}  // namespace tinyscope
