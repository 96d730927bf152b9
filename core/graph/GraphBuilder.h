#pragma once
// Appends tensors and ops to a TrainingGraph, inferring every output's shape and dtype and
// writing the op's attributes exactly as Relay (and so TinyEngine's JSON) spells them. The
// forward lowering and the gradient rules build graphs only through this.
#include "graph/TrainingGraph.h"

namespace tinyscope {

struct Conv2dAttrs {
    int stride_h = 1, stride_w = 1;
    int pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
    int dil_h = 1, dil_w = 1;
    int groups = 1;
};

class GraphBuilder {
public:
    explicit GraphBuilder(TrainingGraph& g) : g_(g) {}

    // Where new ops go and what they are for.
    void setContext(Phase phase, OpRole role, int layer)
    {
        phase_ = phase;
        role_ = role;
        layer_ = layer;
    }
    void setRole(OpRole role) { role_ = role; }
    OpRole role() const { return role_; }

    int parameter(const std::string& name, DType dtype, TensorShape shape, int layer = -1);
    int constant(double value);   // float32 scalar (written as [1])

    // Forward int8 ops.
    int mcuConv2d(int x, int w, int b, int zx, int zy, int s, const Conv2dAttrs& a);
    int mcuTruncate(int x);
    int mcuAdd(int x1, int x2, int zx1, int zx2, int sx1, int sx2, int zy, int sy);
    int mcuMultiply(int x1, int x2, int zx1, int zx2, int sx1, int sx2, int zy, int sy);
    int mcuMean(int x);

    // Relay ops.
    int reshape(int x, const std::vector<int>& newshape);   // Relay codes: 0 = copy dim, -1 = infer
    int cast(int x, DType to);
    int logSoftmax(int x);
    int crossEntropy(int logProbs, int label);
    int greaterEqual(int a, int b);
    int lessEqual(int a, int b);
    int multiply(int a, int b);
    int where(int cond, int a, int b);
    int zeros(const TensorShape& shape, DType dtype = DType::Float32);
    int ones(const TensorShape& shape, DType dtype = DType::Float32);
    int negative(int x);
    int exp(int x);
    int subtract(int a, int b);
    int divide(int a, int b);
    int add(int a, int b);
    // axis: null (all) when empty and `all` is true.
    int sum(int x, const std::vector<int>& axis, bool keepdims, bool exclude);
    int mean(int x, const std::vector<int>& axis, bool keepdims, bool all = false);
    int tile(int x, const std::vector<int>& reps);
    int conv2d(int data, int weight, const Conv2dAttrs& a);
    int transpose(int x, const std::vector<int>& axes);
    int conv2dTranspose(int data, int weight, const Conv2dAttrs& a, int channels, int kh, int kw, int outPadH, int outPadW);
    int stridedSlice(int x, const std::vector<int>& begin, const std::vector<int>& end);

    const Tensor& tensor(int id) const { return g_.tensor(id); }
    TrainingGraph& graph() { return g_; }

private:
    int newOp(OpKind kind, std::vector<int> inputs, Json attrs, DType dtype, TensorShape shape);
    int elementwise(OpKind kind, std::vector<int> inputs, DType dtype);
    TrainingGraph& g_;
    Phase phase_ = Phase::Forward;
    OpRole role_ = OpRole::Forward;
    int layer_ = -1;
};

// Broadcast shape of numpy-style operands; throws std::logic_error when they do not broadcast.
TensorShape broadcastShapes(const TensorShape& a, const TensorShape& b);
// Relay's reshape codes resolved against `in`.
TensorShape resolveReshape(const TensorShape& in, const std::vector<int>& newshape);

}  // namespace tinyscope
