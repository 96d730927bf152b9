#include "graph/GraphBuilder.h"

#include <stdexcept>

namespace tinyscope {

TensorShape broadcastShapes(const TensorShape& a, const TensorShape& b)
{
    const std::size_t n = a.size() > b.size() ? a.size() : b.size();
    TensorShape out(n, 1);
    for (std::size_t i = 0; i < n; ++i) {
        const int da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const int db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (da != db && da != 1 && db != 1) throw std::logic_error("shapes do not broadcast");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

TensorShape resolveReshape(const TensorShape& in, const std::vector<int>& newshape)
{
    TensorShape out(newshape.size());
    int infer = -1;
    std::int64_t known = 1;
    for (std::size_t i = 0; i < newshape.size(); ++i) {
        if (newshape[i] == 0) out[i] = in.at(i);
        else if (newshape[i] == -1) {
            infer = static_cast<int>(i);
            continue;
        } else out[i] = newshape[i];
        known *= out[i];
    }
    if (infer >= 0) out[static_cast<std::size_t>(infer)] = static_cast<int>(shapeElems(in) / known);
    if (shapeElems(out) != shapeElems(in)) throw std::logic_error("reshape changes the element count");
    return out;
}

namespace {

Json convAttrs(const Conv2dAttrs& a)
{
    return Json{{"strides", {a.stride_h, a.stride_w}},
                {"padding", {a.pad_t, a.pad_l, a.pad_b, a.pad_r}},
                {"dilation", {a.dil_h, a.dil_w}},
                {"groups", a.groups},
                {"channels", nullptr},
                {"kernel_size", nullptr},
                {"data_layout", "NCHW"},
                {"kernel_layout", "OIHW"},
                {"out_layout", ""},
                {"out_dtype", ""}};
}

int convOut(int in, int pad0, int pad1, int k, int dil, int stride)
{
    return (in + pad0 + pad1 - ((k - 1) * dil + 1)) / stride + 1;
}

}  // namespace

int GraphBuilder::parameter(const std::string& name, DType dtype, TensorShape shape, int layer)
{
    Tensor t;
    t.kind = TensorKind::Parameter;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.name = name;
    t.layer = layer;
    g_.tensors.push_back(std::move(t));
    return static_cast<int>(g_.tensors.size()) - 1;
}

int GraphBuilder::constant(double value)
{
    Tensor t;
    t.kind = TensorKind::Constant;
    t.dtype = DType::Float32;
    t.value = value;
    g_.tensors.push_back(std::move(t));
    return static_cast<int>(g_.tensors.size()) - 1;
}

int GraphBuilder::newOp(OpKind kind, std::vector<int> inputs, Json attrs, DType dtype, TensorShape shape)
{
    Tensor t;
    t.kind = TensorKind::Activation;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.producer = static_cast<int>(g_.ops.size());
    g_.tensors.push_back(std::move(t));
    Op op;
    op.kind = kind;
    op.phase = phase_;
    op.role = role_;
    op.inputs = std::move(inputs);
    op.output = static_cast<int>(g_.tensors.size()) - 1;
    op.attrs = std::move(attrs);
    op.layer = layer_;
    g_.ops.push_back(std::move(op));
    return g_.ops.back().output;
}

int GraphBuilder::elementwise(OpKind kind, std::vector<int> inputs, DType dtype)
{
    TensorShape s = tensor(inputs[0]).shape;
    for (std::size_t i = 1; i < inputs.size(); ++i) s = broadcastShapes(s, tensor(inputs[i]).shape);
    return newOp(kind, std::move(inputs), Json::object(), dtype, std::move(s));
}

int GraphBuilder::mcuConv2d(int x, int w, int b, int zx, int zy, int s, const Conv2dAttrs& a)
{
    const TensorShape& xs = tensor(x).shape;
    const TensorShape& ws = tensor(w).shape;
    TensorShape out{xs[0], ws[0], convOut(xs[2], a.pad_t, a.pad_b, ws[2], a.dil_h, a.stride_h),
                    convOut(xs[3], a.pad_l, a.pad_r, ws[3], a.dil_w, a.stride_w)};
    return newOp(OpKind::McuConv2d, {x, w, b, zx, zy, s}, convAttrs(a), DType::Int32, std::move(out));
}

int GraphBuilder::mcuTruncate(int x)
{
    return newOp(OpKind::McuTruncate, {x}, Json{{"min", -128}, {"max", 127}}, DType::Int8, tensor(x).shape);
}

int GraphBuilder::mcuAdd(int x1, int x2, int zx1, int zx2, int sx1, int sx2, int zy, int sy)
{
    TensorShape s = broadcastShapes(tensor(x1).shape, tensor(x2).shape);
    return newOp(OpKind::McuAdd, {x1, x2, zx1, zx2, sx1, sx2, zy, sy}, Json{{"axis", 0}}, DType::Int8, std::move(s));
}

int GraphBuilder::mcuMultiply(int x1, int x2, int zx1, int zx2, int sx1, int sx2, int zy, int sy)
{
    TensorShape s = broadcastShapes(tensor(x1).shape, tensor(x2).shape);
    return newOp(OpKind::McuMultiply, {x1, x2, zx1, zx2, sx1, sx2, zy, sy}, Json{{"axis", 0}}, DType::Int8, std::move(s));
}

int GraphBuilder::mcuMean(int x)
{
    TensorShape s = tensor(x).shape;
    s[2] = s[3] = 1;
    return newOp(OpKind::McuMean, {x}, Json{{"axis", {2, 3}}, {"keepdims", 1}, {"exclude", 0}}, DType::Int8, std::move(s));
}

int GraphBuilder::reshape(int x, const std::vector<int>& newshape)
{
    return newOp(OpKind::Reshape, {x}, Json{{"newshape", newshape}}, tensor(x).dtype,
                 resolveReshape(tensor(x).shape, newshape));
}

int GraphBuilder::cast(int x, DType to)
{
    return newOp(OpKind::Cast, {x}, Json{{"dtype", dtypeName(to)}}, to, tensor(x).shape);
}

int GraphBuilder::logSoftmax(int x)
{
    return newOp(OpKind::LogSoftmax, {x}, Json{{"axis", -1}}, DType::Float32, tensor(x).shape);
}

int GraphBuilder::crossEntropy(int logProbs, int label)
{
    return newOp(OpKind::CrossEntropyWithLogits, {logProbs, label}, Json::object(), DType::Float32, {});
}

int GraphBuilder::greaterEqual(int a, int b) { return elementwise(OpKind::GreaterEqual, {a, b}, DType::Bool); }
int GraphBuilder::lessEqual(int a, int b) { return elementwise(OpKind::LessEqual, {a, b}, DType::Bool); }
int GraphBuilder::multiply(int a, int b) { return elementwise(OpKind::Multiply, {a, b}, tensor(a).dtype); }
int GraphBuilder::where(int c, int a, int b) { return elementwise(OpKind::Where, {c, a, b}, tensor(a).dtype); }
int GraphBuilder::negative(int x) { return elementwise(OpKind::Negative, {x}, tensor(x).dtype); }
int GraphBuilder::exp(int x) { return elementwise(OpKind::Exp, {x}, tensor(x).dtype); }
int GraphBuilder::subtract(int a, int b) { return elementwise(OpKind::Subtract, {a, b}, tensor(a).dtype); }
int GraphBuilder::divide(int a, int b) { return elementwise(OpKind::Divide, {a, b}, tensor(a).dtype); }
int GraphBuilder::add(int a, int b) { return elementwise(OpKind::Add, {a, b}, tensor(a).dtype); }

int GraphBuilder::zeros(const TensorShape& shape, DType dtype)
{
    return newOp(OpKind::Zeros, {}, Json{{"shape", shape}, {"dtype", dtypeName(dtype)}}, dtype, shape);
}

int GraphBuilder::ones(const TensorShape& shape, DType dtype)
{
    return newOp(OpKind::Ones, {}, Json{{"shape", shape}, {"dtype", dtypeName(dtype)}}, dtype, shape);
}

namespace {
std::vector<char> reducedAxes(std::size_t rank, const std::vector<int>& axis, bool exclude, bool all)
{
    std::vector<char> r(rank, all ? 1 : 0);
    if (all) return r;
    for (int a : axis) r[static_cast<std::size_t>(a < 0 ? a + static_cast<int>(rank) : a)] = 1;
    if (exclude)
        for (char& c : r) c = !c;
    return r;
}

TensorShape reducedShape(const TensorShape& in, const std::vector<char>& red, bool keepdims)
{
    TensorShape out;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (!red[i]) out.push_back(in[i]);
        else if (keepdims) out.push_back(1);
    }
    return out;
}
}  // namespace

int GraphBuilder::sum(int x, const std::vector<int>& axis, bool keepdims, bool exclude)
{
    const TensorShape& in = tensor(x).shape;
    TensorShape out = reducedShape(in, reducedAxes(in.size(), axis, exclude, false), keepdims);
    return newOp(OpKind::Sum, {x}, Json{{"axis", axis}, {"keepdims", keepdims ? 1 : 0}, {"exclude", exclude ? 1 : 0}},
                 tensor(x).dtype, std::move(out));
}

int GraphBuilder::mean(int x, const std::vector<int>& axis, bool keepdims, bool all)
{
    const TensorShape& in = tensor(x).shape;
    TensorShape out = reducedShape(in, reducedAxes(in.size(), axis, false, all), keepdims);
    Json ax = all ? Json(nullptr) : Json(axis);
    return newOp(OpKind::Mean, {x}, Json{{"axis", ax}, {"keepdims", keepdims ? 1 : 0}, {"exclude", 0}},
                 tensor(x).dtype, std::move(out));
}

int GraphBuilder::tile(int x, const std::vector<int>& reps)
{
    TensorShape s = tensor(x).shape;
    for (std::size_t i = 0; i < s.size(); ++i) s[i] *= reps[i];
    return newOp(OpKind::Tile, {x}, Json{{"reps", reps}}, tensor(x).dtype, std::move(s));
}

int GraphBuilder::conv2d(int data, int weight, const Conv2dAttrs& a)
{
    const TensorShape& xs = tensor(data).shape;
    const TensorShape& ws = tensor(weight).shape;
    TensorShape out{xs[0], ws[0], convOut(xs[2], a.pad_t, a.pad_b, ws[2], a.dil_h, a.stride_h),
                    convOut(xs[3], a.pad_l, a.pad_r, ws[3], a.dil_w, a.stride_w)};
    return newOp(OpKind::Conv2d, {data, weight}, convAttrs(a), DType::Float32, std::move(out));
}

int GraphBuilder::transpose(int x, const std::vector<int>& axes)
{
    const TensorShape& in = tensor(x).shape;
    TensorShape out(in.size());
    for (std::size_t i = 0; i < axes.size(); ++i) out[i] = in[static_cast<std::size_t>(axes[i])];
    return newOp(OpKind::Transpose, {x}, Json{{"axes", axes}}, tensor(x).dtype, std::move(out));
}

int GraphBuilder::conv2dTranspose(int data, int weight, const Conv2dAttrs& a, int channels, int kh, int kw, int outPadH,
                                  int outPadW)
{
    const TensorShape& xs = tensor(data).shape;
    const int ho = (xs[2] - 1) * a.stride_h - a.pad_t - a.pad_b + (kh - 1) * a.dil_h + 1 + outPadH;
    const int wo = (xs[3] - 1) * a.stride_w - a.pad_l - a.pad_r + (kw - 1) * a.dil_w + 1 + outPadW;
    Json attrs{{"channels", channels},
               {"kernel_size", {kh, kw}},
               {"strides", {a.stride_h, a.stride_w}},
               {"output_padding", {outPadH, outPadW}},
               {"padding", {a.pad_t, a.pad_l, a.pad_b, a.pad_r}},
               {"dilation", {a.dil_h, a.dil_w}},
               {"groups", a.groups},
               {"data_layout", "NCHW"},
               {"kernel_layout", "IOHW"},
               {"out_layout", ""},
               {"out_dtype", ""}};
    return newOp(OpKind::Conv2dTranspose, {data, weight}, std::move(attrs), DType::Float32, {xs[0], channels, ho, wo});
}

int GraphBuilder::stridedSlice(int x, const std::vector<int>& begin, const std::vector<int>& end)
{
    TensorShape s(begin.size());
    for (std::size_t i = 0; i < begin.size(); ++i) s[i] = end[i] - begin[i];
    Json attrs{{"begin", begin}, {"end", end}, {"strides", {1}}, {"slice_mode", "end"}, {"axes", nullptr}};
    return newOp(OpKind::StridedSlice, {x}, std::move(attrs), tensor(x).dtype, std::move(s));
}

}  // namespace tinyscope
