#pragma once
// The parameter and buffer layout of a once-for-all supernet of a DesignSpace, with the key names
// of the lab's OFAMCUNets checkpoints ("blocks.3.mobile_inverted_conv.depth_conv.conv.7to5_matrix",
// "...bn.bn.running_var", "classifier.linear.linear.weight"). Torch-free: names and shapes only,
// used to validate a checkpoint before any tensor is touched.
#include "space/DesignSpace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct SchemaEntry {
    std::string key;
    std::vector<std::int64_t> shape;   // {} for num_batches_tracked (a scalar)
    bool is_buffer = false;            // running stats and counters
    bool is_int64 = false;
};

// The largest channel counts each supernet block can take (over every width setting).
struct SupernetBlockSpec {
    int index = 0;       // supernet block index (0 = fused block 0)
    int stage = -1;
    int j = 0;
    int max_cin = 0, max_mid = 0, max_cout = 0, max_se = 0;
    bool se = false;
};

struct SupernetSchema {
    int max_first = 0;
    int max_block0 = 0;
    int max_last = 0;       // input of the feature mix
    int feature_mix = 0;
    int max_kernel = 0;
    std::vector<SupernetBlockSpec> blocks;   // index 0 .. maxBlocks
    std::vector<SchemaEntry> entries;        // file order
};

SupernetSchema supernetSchema(const DesignSpace& space);

// Prefixes of the supernet modules, e.g. "blocks.3.mobile_inverted_conv.".
std::string supernetBlockPrefix(int supernetBlock);
// "7to5_matrix": the kernel-transform matrix from size `from` to the next smaller size `to`.
std::string kernelTransformName(int from, int to);

}  // namespace tinyscope
