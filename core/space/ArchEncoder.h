#pragma once
// The accuracy predictor's input encoding (MCUNET_SPACE.md §5): one-hot blocks laid out as
// [resolution | width | kernel per block | expand per block]; inactive blocks are all zero.
// 128 dimensions for MCUNet-VWW.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <string>
#include <vector>

namespace tinyscope {

class ArchEncoder {
public:
    explicit ArchEncoder(const DesignSpace& space);

    int dims() const { return dims_; }
    int widthOffset() const { return w_off_; }
    int kernelOffset(int block) const { return k_off_ + block * static_cast<int>(space_->ks_list.size()); }
    int expandOffset(int block) const { return e_off_ + block * static_cast<int>(space_->expand_list.size()); }

    std::vector<int> oneHotIndices(const SubnetConfig& c) const;   // ascending
    std::vector<float> encode(const SubnetConfig& c) const;
    void encodeInto(const SubnetConfig& c, float* out) const;      // writes dims() floats
    std::string bits(const SubnetConfig& c) const;                  // "0100…", dims() characters

    // Inverse of encode; inactive ks/e become 0 and non-elastic stages get their base depth.
    // Throws InputError if the vector is not a valid encoding (names the offending group).
    SubnetConfig decode(const std::vector<float>& feature) const;
    SubnetConfig decodeIndices(const std::vector<int>& indices) const;
    SubnetConfig decodeBits(const std::string& bits) const;

    const DesignSpace& space() const { return *space_; }

private:
    const DesignSpace* space_;
    int dims_ = 0, w_off_ = 0, k_off_ = 0, e_off_ = 0;
};

}  // namespace tinyscope
