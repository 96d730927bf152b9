#pragma once
// The gradient rules: one table from op kind to a short rule that, given the gradient g of the
// op's output, emits the ops computing the gradients of the inputs that need one, in the
// backward idioms of TINYENGINE_JSON_SPEC.md §5.4. The graph walk (Autodiff.cpp) decides which
// inputs need gradients and how contributions meet; the rules know nothing about the walk.
#include "graph/GraphBuilder.h"

namespace tinyscope {

class RuleContext {
public:
    RuleContext(GraphBuilder& builder, AutodiffMode mode) : b(builder), mode(mode) {}

    GraphBuilder& b;
    const AutodiffMode mode;

    // Set by the walk for each op.
    void begin(const Op& op, std::vector<char> wanted, int weightChannels);
    const Op& op() const { return *op_; }
    bool wants(int slot) const { return wanted_[static_cast<std::size_t>(slot)] != 0; }
    void give(int slot, int gradient) { grads_[static_cast<std::size_t>(slot)] = gradient; }
    const std::vector<int>& gradients() const { return grads_; }
    // Input channels of the weight gradient (0: all), from the sparse scheme.
    int weightChannels() const { return weight_channels_; }

    const Tensor& t(int id) const { return b.tensor(id); }
    const TensorShape& shape(int id) const { return b.tensor(id).shape; }

    // Shared idioms.
    int clampMask(int x);              // cast → greater_equal(−128) · less_equal(127), bool
    int perChannel(int param);         // reshape(param, [1, −1, 1, 1])
    int weightGradient(int gs);        // tile + grouped conv chain of §5.4 for the current mcuconv2d

private:
    const Op* op_ = nullptr;
    std::vector<char> wanted_;
    std::vector<int> grads_;
    int weight_channels_ = 0;
};

using GradientRule = void (*)(RuleContext& c, int g);

// The rule of `kind`, or nullptr for ops that are never differentiated (backward-only ops).
GradientRule gradientRule(OpKind kind);

}  // namespace tinyscope
