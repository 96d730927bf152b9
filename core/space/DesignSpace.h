#pragma once
// A once-for-all design space of the MCUNet family: a stem conv, a fused first block
// (pointwise only), elastic stages of inverted-bottleneck blocks, a feature-mix conv and a
// linear classifier. Loaded from JSON (models/spaces/*.json); see docs/DESIGN_SPACE.md.
#include "io/JsonFile.h"

#include <string>
#include <vector>

namespace tinyscope {

// Channel widths of one width setting (one entry of width_mult_list).
struct WidthSet {
    int first_conv = 0;
    int block0 = 0;
    std::vector<int> stages;  // output channels of each stage
    int feature_mix = 0;
};

struct StageSpec {
    int stride = 1;
    int base_depth = 1;
    bool elastic_depth = true;    // false: the stage always has base_depth blocks (d ignored)
    std::vector<bool> se;         // per block of the stage (size = max_blocks)
    int max_blocks = 1;           // base_depth + max(depth_list) if elastic, else base_depth
    int first_block = 0;          // index into the ks/e arrays
};

class DesignSpace {
public:
    static constexpr int kMaxBlocks = 64;  // capacity of SubnetLayout

    static DesignSpace fromJson(const Json& j, const std::string& source);
    static DesignSpace loadFile(const std::string& path);
    Json toJson() const;

    std::string name;
    std::string family = "mcunet";
    std::string description;
    int n_classes = 2;
    std::vector<std::string> class_names;
    std::vector<int> resolutions;
    std::vector<double> width_mult_list;
    std::vector<WidthSet> widths;      // one per width index (`wid`)
    std::vector<int> ks_list;
    std::vector<int> expand_list;
    std::vector<int> depth_list;
    std::vector<StageSpec> stages;
    std::vector<int> sampler_width_indices;  // widths the supernet's own sampler draws (lab: {0, 1})
    double bn_eps = 1e-3;

    int numStages() const { return static_cast<int>(stages.size()); }
    int maxBlocks() const { return total_blocks_; }   // length of ks / e (20 for MCUNet)
    int numWidths() const { return static_cast<int>(widths.size()); }
    int stageOfBlock(int b) const { return block_stage_[static_cast<std::size_t>(b)]; }
    int maxDepth() const;
    int minDepth() const;

    // Index of a value in its list, or -1.
    int resolutionIndex(int r) const { return indexOf(resolutions, r); }
    int kernelIndex(int k) const { return indexOf(ks_list, k); }
    int expandIndex(int e) const { return indexOf(expand_list, e); }
    int depthIndex(int d) const { return indexOf(depth_list, d); }

    static int indexOf(const std::vector<int>& v, int x)
    {
        for (std::size_t i = 0; i < v.size(); ++i)
            if (v[i] == x) return static_cast<int>(i);
        return -1;
    }

private:
    void finalize(const std::string& source);
    int total_blocks_ = 0;
    std::vector<int> block_stage_;
};

}  // namespace tinyscope
