#pragma once
// Runs a TrainingGraph on the CPU: the forward int8 ops with their integer semantics (held in
// float32, rounding half to even as LibTorch does) and the float32 backward ops, so the
// parameter gradients the compiled graph computes can be compared with autograd. Plain loops;
// meant for checking graphs, not for speed.
#include "graph/TrainingGraph.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

struct Network;

// Parameter values by name (int8 / int32 values stored as floats), shapes as in the graph.
struct ParameterStore {
    std::map<std::string, std::vector<float>> values;

    void set(const std::string& name, std::vector<float> v) { values[name] = std::move(v); }
    bool has(const std::string& name) const { return values.count(name) > 0; }
    const std::vector<float>& get(const std::string& name) const;   // throws InputError
};

class GraphInterpreter {
public:
    explicit GraphInterpreter(const TrainingGraph& g);

    // Binds parameter values (input, label, weights, ...); sizes are checked.
    void bind(const ParameterStore& p);
    void bind(int tensor, std::vector<float> v);

    void execute(int op);   // one op (its inputs must have values)
    void runForward();      // ops [0, forward_ops): forward and loss
    void run();             // the live ops in execution order (forward, loss, pruned backward)

    bool hasValue(int tensor) const { return !values_[static_cast<std::size_t>(tensor)].empty() || g_.tensor(tensor).elems() == 0; }
    const std::vector<float>& value(int tensor) const;
    // The graph output whose info is `name` (a parameter name or "fwd@output").
    const std::vector<float>& output(const std::string& name) const;
    double loss() const { return value(g_.loss)[0]; }

private:
    const TrainingGraph& g_;
    std::vector<std::vector<float>> values_;
};

// Plausible int8 parameters for every parameter of `g` lowered from `net`: random int8 weights,
// int32 biases, zero points chained from producer to consumer (−128 after ReLU-like clamps),
// per-channel scales calibrated on a random input so outputs use the int8 range with some
// clamping at both ends; plus that input and a random one-hot label (a random target for MSE).
ParameterStore syntheticQuantParameters(const TrainingGraph& g, const Network& net, unsigned seed);

}  // namespace tinyscope
