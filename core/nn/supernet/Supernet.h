#pragma once
// A once-for-all supernet of the MCUNet family: the full shared weights (kernel-transform
// matrices, SE, BN) of a DesignSpace, loaded from / saved to the real checkpoint format, with
// a dynamic forward for training and extract() for static subnets.
#include "nn/supernet/Checkpoint.h"
#include "nn/supernet/SubnetWeights.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "space/SupernetSchema.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace tinyscope {

class Subnet;

// What Supernet::initializeFrom took from another supernet's file.
struct WeightTransfer {
    std::string source;
    int taken = 0;                     // weights and buffers of the space found in the file with their shape
    std::vector<std::string> fresh;    // keys of the space the file lacks: initialised fresh
    std::vector<std::string> unused;   // keys of the file the space lacks (e.g. squeeze-excite layers)
    // "312 tensors taken from F, none new, 72 of the file unused (blocks.5.….se.fc.reduce.weight; …)"
    std::string summary() const;
};

class Supernet {
public:
    // Checks every key and shape against the space first: missing and unexpected keys and shape
    // mismatches are reported by name with both shapes. Half-precision weights become float32.
    static Supernet fromStateDict(const DesignSpace& space, const StateDict& sd, const std::string& source);
    static Supernet load(const DesignSpace& space, const std::string& path);
    // Fresh weights as once-for-all initialises them (He-normal convs, BN γ=1 β=0, identity-free
    // kernel-transform matrices = I), seeded.
    static Supernet initialize(const DesignSpace& space, std::uint64_t seed);
    // initialize(space, seed), then every tensor the supernet file at `path` holds under a key of
    // this space with the same shape: the weights of a related space (issue 46: the SE space's
    // supernet starts its squeeze-excite-free variant). Keys only the file has are ignored, keys only
    // the space has stay fresh (both listed in `transfer`); a key both have with different shapes,
    // or a file with no key of the space, is refused naming them. With a file of the space itself
    // the result equals load().
    static Supernet initializeFrom(const DesignSpace& space, std::uint64_t seed, const std::string& path, WeightTransfer* transfer = nullptr);

    const DesignSpace& space() const { return *space_; }
    StateDict stateDict() const;                        // schema order, supernet key names
    void save(const std::string& path) const;           // {"state_dict": ...} as the lab's files
    std::int64_t parameterBytes() const;

    // Differentiable views of the shared weights for `config` (training, BN calibration).
    NetWeights weightsFor(const SubnetConfig& config) const;
    // A static subnet with its own copies of the sliced / kernel-transformed weights.
    Subnet extract(const SubnetConfig& config) const;

    std::vector<at::Tensor> parameters() const;         // trainable tensors (requires_grad)
    at::Tensor& tensor(const std::string& key);
    const at::Tensor& tensor(const std::string& key) const;

private:
    std::shared_ptr<const DesignSpace> space_;
    SupernetSchema schema_;
    std::map<std::string, at::Tensor> t_;
};

// A static subnet: a LibTorch module whose parameters and buffers carry the lab's extracted-subnet
// names ("blocks.1.mobile_inverted_conv.depth_conv.conv.weight"), plus the fast forward.
class Subnet {
public:
    Subnet(std::shared_ptr<const DesignSpace> space, SubnetConfig config, NetWeights weights);
    Subnet(Subnet&&) noexcept;
    Subnet& operator=(Subnet&&) noexcept;
    ~Subnet();

    const SubnetConfig& config() const { return config_; }
    const DesignSpace& space() const { return *space_; }
    at::Tensor forward(const at::Tensor& x) const;                 // eval mode
    at::Tensor forward(const at::Tensor& x, const ForwardOptions& options) const;
    NetWeights& weights() { return net_; }
    const NetWeights& weights() const { return net_; }
    // Other tensors (another shape: channel pruning), the module view dropped with the old ones.
    void replaceWeights(NetWeights weights);

    std::int64_t parameterCount() const;    // trainable parameters (equals CostModel params)
    StateDict stateDict() const;            // the lab's subnet key names
    void save(const std::string& path) const;
    // The module view (named_parameters(), named_buffers()); built on first use.
    torch::nn::Module& module();

    // Folded BN for faster eval; any BN change (calibration) must unfold first.
    void setFolded(bool folded);

private:
    std::shared_ptr<const DesignSpace> space_;
    SubnetConfig config_;
    NetWeights net_;
    std::shared_ptr<torch::nn::Module> module_;
};

}  // namespace tinyscope
