#pragma once
// The training graph as plain data (ggml style): tensors and ops in the quantized op vocabulary
// of TinyEngine's training-graph JSON (TINYENGINE_JSON_SPEC.md §5) — forward int8 ops, the loss,
// and the float backward built by compile-time autodiff. Readers: the DOT view (viz/), the
// memory-ledger consistency checks, the interpreter and the TinyEngine exporter.
//
// The graph keeps every backward op the gradient rules produced; dead-code elimination marks
// the ones the chosen sparse scheme needs (`live`) and their execution order (`order`), so a
// view can show pruned ops and an exporter can walk `order` only.
#include "io/JsonFile.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tinyscope {

enum class DType : std::uint8_t { Int8, Int32, Float32, Bool };
enum class TensorKind : std::uint8_t { Activation, Parameter, Constant };

enum class OpKind : std::uint8_t {
    // forward (int8)
    McuConv2d, McuTruncate, McuAdd, McuMean,
    McuMultiply,   // squeeze-excite gate; not in TinyEngine's vocabulary (see docs/TRAINING_GRAPH.md)
    // loss
    Reshape, Cast, LogSoftmax, CrossEntropyWithLogits,
    // float ops of the backward graph (and of the MSE loss)
    GreaterEqual, LessEqual, Multiply, Where, Zeros, Ones, Negative, Exp, Subtract, Divide, Add, Sum, Mean,
    Tile, Conv2d, Transpose, Conv2dTranspose, StridedSlice,
};
constexpr int kOpKindCount = static_cast<int>(OpKind::StridedSlice) + 1;

enum class Phase : std::uint8_t { Forward, Loss, Backward };

// Why an op exists; used by views and by the checks that the graph keeps what the ledger charges.
enum class OpRole : std::uint8_t {
    Forward,     // forward int8 op
    Loss,        // loss head
    Seed,        // d loss / d loss = 1
    Mask,        // clamp mask: cast, greater_equal, less_equal, multiply (bool)
    Gradient,    // propagating a gradient (where, scales, reshapes, loss gradient, pool, add)
    BiasGrad,    // the bias-gradient sum
    WeightGrad,  // cast/slice of the saved input, tile, grouped conv, reshape, sum, transpose
    InputGrad,   // cast of the weight + transposed conv
    Accumulate,  // add of two gradient contributions (correct mode only)
    ZeroGrad,    // reference mode's dummy zero gradients of the classifier's scale / zero points
};

enum class AutodiffMode : std::uint8_t {
    Correct,     // accumulate gradients reaching a tensor twice; weight gradient of (x − zero_x)
    Reference,   // MIT's compiler: later writes overwrite (residual skip gradient lost), weight
                 // gradient of the raw int8 input; dummy zero gradients of classifier scale/zeros
};

const char* opTypeName(OpKind k);      // Relay op name, e.g. "nn.mcuconv2d"
const char* dtypeName(DType d);        // "int8", "int32", "float32", "bool"
// Inverses for readers of TinyEngine JSON; false when the name is not in the vocabulary.
bool opKindFromName(const std::string& name, OpKind& kind);
bool dtypeFromName(const std::string& name, DType& dtype);
const char* opRoleName(OpRole r);
const char* autodiffModeName(AutodiffMode m);   // "correct", "reference"
AutodiffMode parseAutodiffMode(const std::string& s);   // throws InputError

using TensorShape = std::vector<int>;
std::int64_t shapeElems(const TensorShape& s);
std::int64_t dtypeBytes(DType d);      // bool: 1

struct Tensor {
    TensorKind kind = TensorKind::Activation;
    DType dtype = DType::Float32;
    TensorShape shape;        // [] for scalars (written as [1] in TinyEngine JSON)
    std::string name;         // parameters: the variable name; others: empty
    int producer = -1;        // op index for activations
    double value = 0.0;       // constants: the scalar
    int layer = -1;           // parameters: the Network layer they belong to

    std::int64_t elems() const { return shapeElems(shape); }
    std::int64_t bytes() const { return elems() * dtypeBytes(dtype); }
};

struct Op {
    OpKind kind = OpKind::Add;
    Phase phase = Phase::Forward;
    OpRole role = OpRole::Forward;
    std::vector<int> inputs;  // tensor ids in Relay argument order
    int output = -1;
    Json attrs = Json::object();
    int layer = -1;           // Network layer lowered here, or whose gradient rule emitted the op
};

enum class GradientKind : std::uint8_t { Loss, Bias, Weight, Zero };

// One entry of the graph's output tuple: the loss first, then parameter gradients.
struct GraphOutput {
    int tensor = -1;
    std::string info;         // "fwd@output" or the parameter name (TinyEngine's output_info)
    GradientKind kind = GradientKind::Loss;
    int layer = -1;           // Network layer of the parameter
    int conv_index = -1;
};

struct TrainingGraph {
    std::string model;
    AutodiffMode mode = AutodiffMode::Correct;
    std::vector<Tensor> tensors;
    std::vector<Op> ops;          // creation order: forward and loss first, then backward (topological)
    int input = -1, label = -1, loss = -1;
    int forward_ops = 0;          // ops[0 .. forward_ops) are the forward + loss ops
    std::vector<GraphOutput> outputs;
    std::vector<char> live;       // per op: needed by `outputs` (set by eliminateDeadCode)
    std::vector<int> order;       // live ops in execution order (post-order DFS of `outputs`)
    // Reference mode: (consumer op, input slot) pairs whose gradient contribution the
    // overwrite semantics lost (e.g. the residual skip path); empty in correct mode.
    std::vector<std::pair<int, int>> dropped_contributions;
    std::vector<int> parameter_order;      // parameters in first-use order of a post-order walk from the loss
    std::vector<int> parameter_gradient;   // per tensor id: the tensor holding that parameter's gradient, or -1
    std::vector<int> weight_channels;      // per Network layer: input channels of its weight-gradient chain

    const Tensor& tensor(int id) const { return tensors[static_cast<std::size_t>(id)]; }
    const Op& op(int i) const { return ops[static_cast<std::size_t>(i)]; }
    bool isLive(int op) const { return op < static_cast<int>(live.size()) && live[static_cast<std::size_t>(op)]; }
    int liveOps() const { return static_cast<int>(order.size()); }
    int prunedOps() const { return static_cast<int>(ops.size()) - liveOps(); }
    int findParameter(const std::string& name) const;   // tensor id or -1 (a linear scan)
    // Every parameter's name -> tensor id, in one pass: for lookups in a loop over the outputs or ops
    // (findParameter in such a loop made importing a large graph quadratic).
    std::unordered_map<std::string, int> parameterIndex() const;
};

}  // namespace tinyscope
