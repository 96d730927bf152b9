#include "graph/GraphInterpreter.h"

#include "Error.h"
#include "zoo/Network.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace tinyscope {

const std::vector<float>& ParameterStore::get(const std::string& name) const
{
    auto it = values.find(name);
    if (it == values.end()) throw InputError("no value for parameter '" + name + "'");
    return it->second;
}

namespace {

using Values = std::vector<float>;

std::vector<std::int64_t> stridesOf(const TensorShape& s)
{
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

// Strides of `in` read at the coordinates of `out` (numpy broadcasting: 0 on broadcast dims).
std::vector<std::int64_t> broadcastStrides(const TensorShape& in, const TensorShape& out)
{
    std::vector<std::int64_t> st(out.size(), 0);
    const std::vector<std::int64_t> s = stridesOf(in);
    const std::size_t off = out.size() - in.size();
    for (std::size_t i = 0; i < in.size(); ++i) st[i + off] = in[i] == 1 ? 0 : s[i];
    return st;
}

template <class F>
Values elementwise(const std::vector<const Values*>& in, const std::vector<TensorShape>& shapes, const TensorShape& out, F f)
{
    const std::int64_t n = shapeElems(out);
    Values r(static_cast<std::size_t>(n));
    std::vector<std::vector<std::int64_t>> st;
    for (const TensorShape& s : shapes) st.push_back(broadcastStrides(s, out));
    std::vector<int> idx(out.size(), 0);
    std::vector<std::int64_t> off(in.size(), 0);
    float args[3];
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::size_t k = 0; k < in.size(); ++k) args[k] = (*in[k])[static_cast<std::size_t>(off[k])];
        r[static_cast<std::size_t>(i)] = f(args);
        for (std::size_t d = out.size(); d-- > 0;) {   // advance the multi-index
            ++idx[d];
            for (std::size_t k = 0; k < in.size(); ++k) off[k] += st[k][d];
            if (idx[d] < out[d]) break;
            for (std::size_t k = 0; k < in.size(); ++k) off[k] -= st[k][d] * out[d];
            idx[d] = 0;
        }
    }
    return r;
}

std::vector<int> ints(const Json& j)
{
    std::vector<int> v;
    for (const Json& e : j) v.push_back(e.get<int>());
    return v;
}

struct ConvGeometry {
    int sh, sw, pt, pl, dh, dw, groups;
};

ConvGeometry geometry(const Json& a)
{
    return {a["strides"][0].get<int>(), a["strides"][1].get<int>(), a["padding"][0].get<int>(), a["padding"][1].get<int>(),
            a["dilation"][0].get<int>(), a["dilation"][1].get<int>(), a["groups"].get<int>()};
}

// out[o,y,x] = Σ_{c in group(o), ky, kx} x[c, y·s − p + ky·d, …] · w[o, c − c0, ky, kx] (batch 1), in double.
std::vector<double> convolve(const Values& x, const TensorShape& xs, const Values& w, const TensorShape& ws,
                             const TensorShape& os, const ConvGeometry& g, float xOffset)
{
    const int C = xs[1], H = xs[2], W = xs[3], O = ws[0], Cg = ws[1], KH = ws[2], KW = ws[3], HO = os[2], WO = os[3];
    const int Og = O / g.groups;
    std::vector<double> out(static_cast<std::size_t>(O) * HO * WO, 0.0);
    for (int o = 0; o < O; ++o) {
        const int c0 = (o / Og) * Cg;
        for (int y = 0; y < HO; ++y)
            for (int xx = 0; xx < WO; ++xx) {
                double acc = 0;
                for (int c = 0; c < Cg; ++c)
                    for (int ky = 0; ky < KH; ++ky) {
                        const int iy = y * g.sh - g.pt + ky * g.dh;
                        if (iy < 0 || iy >= H) continue;
                        for (int kx = 0; kx < KW; ++kx) {
                            const int ix = xx * g.sw - g.pl + kx * g.dw;
                            if (ix < 0 || ix >= W) continue;
                            acc += static_cast<double>(x[(static_cast<std::size_t>(c0 + c) * H + iy) * W + ix] - xOffset) *
                                   w[((static_cast<std::size_t>(o) * Cg + c) * KH + ky) * KW + kx];
                        }
                    }
                out[(static_cast<std::size_t>(o) * HO + y) * WO + xx] = acc;
            }
    }
    (void)C;
    return out;
}

float roundHalfEven(float v) { return std::nearbyint(v); }

// Calls f(linear index, multi-index) for every element of `shape`, in row-major order.
template <class F>
void forEachIndex(const TensorShape& shape, F f)
{
    const std::int64_t n = shapeElems(shape);
    std::vector<int> idx(shape.size(), 0);
    for (std::int64_t i = 0; i < n; ++i) {
        f(i, idx);
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

// Gathers out[i] = x[Σ_d source(d, idx[d])·stride_d(x)] over the output's indices.
template <class Source>
Values gather(const Values& x, const TensorShape& xs, const TensorShape& os, Source source)
{
    const std::vector<std::int64_t> st = stridesOf(xs);
    Values r(static_cast<std::size_t>(shapeElems(os)));
    forEachIndex(os, [&](std::int64_t i, const std::vector<int>& idx) {
        std::int64_t src = 0;
        for (std::size_t d = 0; d < os.size(); ++d) src += source(d, idx) * st[d];
        r[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(src)];
    });
    return r;
}

// McuConv2d: y = round((conv(x − zx, W) + b) · s) + zy, float32 like the fake-quantized model.
Values interpretMcuConv(const Values& x, const TensorShape& xs, const Values& w, const TensorShape& ws, const Values& b, const Values& s, float zx,
                        float zy, const TensorShape& os, const Json& attrs)
{
    const std::vector<double> acc = convolve(x, xs, w, ws, os, geometry(attrs), zx);
    const std::int64_t n = shapeElems(os);
    const int O = os[1];
    const std::int64_t hw = n / O;
    Values r(static_cast<std::size_t>(n));
    for (int o = 0; o < O; ++o)
        for (std::int64_t p = 0; p < hw; ++p) {
            const std::size_t i = static_cast<std::size_t>(o * hw + p);
            const float z = static_cast<float>(acc[i]) + b[static_cast<std::size_t>(o)];
            r[i] = roundHalfEven(z * s[static_cast<std::size_t>(o)]) + zy;
        }
    return r;
}

// McuMean: the rounded mean over H × W of each channel (batch 1).
Values interpretMcuMean(const Values& x, const TensorShape& xs, std::int64_t n)
{
    const int hw = xs[2] * xs[3];
    Values r(static_cast<std::size_t>(n), 0.f);
    for (int c = 0; c < xs[1]; ++c) {
        double sum = 0;
        for (int p = 0; p < hw; ++p) sum += x[static_cast<std::size_t>(c * hw + p)];
        r[static_cast<std::size_t>(c)] = roundHalfEven(static_cast<float>(sum) / static_cast<float>(hw));
    }
    return r;
}

// LogSoftmax over the last dimension.
Values interpretLogSoftmax(Values r, const TensorShape& os)
{
    const int last = os.back();
    const std::int64_t n = shapeElems(os);
    for (std::int64_t row = 0; row < n / last; ++row) {
        float* v = r.data() + row * last;
        double mx = *std::max_element(v, v + last), sum = 0;
        for (int i = 0; i < last; ++i) sum += std::exp(static_cast<double>(v[i]) - mx);
        const double lse = mx + std::log(sum);
        for (int i = 0; i < last; ++i) v[i] = static_cast<float>(v[i] - lse);
    }
    return r;
}

// Sum or Mean over the attribute's axes (all when null; the others with "exclude"), in double.
Values interpretReduction(const Values& x, const TensorShape& xs, const Json& attrs, bool mean)
{
    const std::size_t rank = xs.size();
    std::vector<char> red(rank, 0);
    if (attrs["axis"].is_null()) std::fill(red.begin(), red.end(), 1);
    else
        for (int a : ints(attrs["axis"])) red[static_cast<std::size_t>(a < 0 ? a + static_cast<int>(rank) : a)] = 1;
    if (attrs.value("exclude", 0))
        for (char& c : red) c = !c;
    TensorShape kept = xs;
    std::int64_t count = 1;
    for (std::size_t d = 0; d < rank; ++d)
        if (red[d]) {
            count *= kept[d];
            kept[d] = 1;
        }
    std::vector<double> acc(static_cast<std::size_t>(shapeElems(kept)), 0.0);
    const std::vector<std::int64_t> ks = stridesOf(kept);
    forEachIndex(xs, [&](std::int64_t i, const std::vector<int>& idx) {
        std::int64_t o = 0;
        for (std::size_t d = 0; d < rank; ++d) o += red[d] ? 0 : idx[d] * ks[d];
        acc[static_cast<std::size_t>(o)] += x[static_cast<std::size_t>(i)];
    });
    Values r(acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i) r[i] = static_cast<float>(mean ? acc[i] / static_cast<double>(count) : acc[i]);
    return r;
}

// Transpose: out[idx] = x[idx permuted back]; dimension d of the output is axes[d] of the input.
Values interpretTranspose(const Values& x, const TensorShape& xs, const TensorShape& os, const Json& attrs)
{
    const std::vector<int> axes = ints(attrs["axes"]);
    const std::vector<std::int64_t> st = stridesOf(xs);
    Values r(static_cast<std::size_t>(shapeElems(os)));
    forEachIndex(os, [&](std::int64_t i, const std::vector<int>& idx) {
        std::int64_t src = 0;
        for (std::size_t d = 0; d < os.size(); ++d) src += idx[d] * st[static_cast<std::size_t>(axes[d])];
        r[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(src)];
    });
    return r;
}

// Conv2dTranspose: every input pixel scattered through the IOHW kernel (batch 1, dilation 1).
Values interpretConvTranspose(const Values& x, const TensorShape& xs, const Values& w, const TensorShape& ws, const TensorShape& os, const Json& attrs)
{
    const ConvGeometry gm = geometry(attrs);
    const int CI = xs[1], H = xs[2], W = xs[3], COg = ws[1], KH = ws[2], KW = ws[3], HO = os[2], WO = os[3];
    const int CIg = CI / gm.groups;
    std::vector<double> acc(static_cast<std::size_t>(shapeElems(os)), 0.0);
    for (int ci = 0; ci < CI; ++ci) {
        const int co0 = (ci / CIg) * COg;
        for (int y = 0; y < H; ++y)
            for (int xx = 0; xx < W; ++xx) {
                const double v = x[(static_cast<std::size_t>(ci) * H + y) * W + xx];
                if (v == 0.0) continue;
                for (int oc = 0; oc < COg; ++oc)
                    for (int ky = 0; ky < KH; ++ky) {
                        const int oy = y * gm.sh - gm.pt + ky * gm.dh;
                        if (oy < 0 || oy >= HO) continue;
                        for (int kx = 0; kx < KW; ++kx) {
                            const int ox = xx * gm.sw - gm.pl + kx * gm.dw;
                            if (ox < 0 || ox >= WO) continue;
                            acc[(static_cast<std::size_t>(co0 + oc) * HO + oy) * WO + ox] += v * w[((static_cast<std::size_t>(ci) * COg + oc) * KH + ky) * KW + kx];
                        }
                    }
            }
    }
    return Values(acc.begin(), acc.end());
}

}  // namespace

GraphInterpreter::GraphInterpreter(const TrainingGraph& g) : g_(g), values_(g.tensors.size())
{
    for (std::size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].kind == TensorKind::Constant) values_[t] = {static_cast<float>(g.tensors[t].value)};
}

void GraphInterpreter::bind(int tensor, std::vector<float> v)
{
    const Tensor& t = g_.tensor(tensor);
    if (static_cast<std::int64_t>(v.size()) != t.elems())
        throw InputError("parameter '" + t.name + "': " + std::to_string(v.size()) + " values for " +
                         std::to_string(t.elems()) + " elements");
    values_[static_cast<std::size_t>(tensor)] = std::move(v);
}

void GraphInterpreter::bind(const ParameterStore& p)
{
    for (std::size_t t = 0; t < g_.tensors.size(); ++t) {
        const Tensor& tt = g_.tensors[t];
        if (tt.kind == TensorKind::Parameter && p.has(tt.name)) bind(static_cast<int>(t), p.get(tt.name));
    }
}

const std::vector<float>& GraphInterpreter::value(int tensor) const
{
    const std::vector<float>& v = values_[static_cast<std::size_t>(tensor)];
    const Tensor& t = g_.tensor(tensor);
    if (static_cast<std::int64_t>(v.size()) != t.elems())
        throw InputError(t.kind == TensorKind::Parameter ? "no value for parameter '" + t.name + "'"
                                                         : "tensor " + std::to_string(tensor) + " has not been computed");
    return v;
}

const std::vector<float>& GraphInterpreter::output(const std::string& name) const
{
    for (const GraphOutput& o : g_.outputs)
        if (o.info == name) return value(o.tensor);
    throw InputError("the graph has no output '" + name + "'");
}

void GraphInterpreter::runForward()
{
    for (int i = 0; i < g_.forward_ops; ++i) execute(i);
}

void GraphInterpreter::run()
{
    for (int op : g_.order) execute(op);
}

void GraphInterpreter::execute(int opIndex)
{
    const Op& op = g_.op(opIndex);
    const Tensor& outT = g_.tensor(op.output);
    const TensorShape& os = outT.shape;
    auto in = [&](int slot) -> const Values& { return value(op.inputs[static_cast<std::size_t>(slot)]); };
    auto shp = [&](int slot) -> const TensorShape& { return g_.tensor(op.inputs[static_cast<std::size_t>(slot)]).shape; };
    auto ew = [&](auto f) {
        std::vector<const Values*> ins;
        std::vector<TensorShape> shapes;
        for (std::size_t s = 0; s < op.inputs.size(); ++s) {
            ins.push_back(&in(static_cast<int>(s)));
            shapes.push_back(shp(static_cast<int>(s)));
        }
        return elementwise(ins, shapes, os, f);
    };
    const std::int64_t n = shapeElems(os);
    Values r;

    switch (op.kind) {
    case OpKind::McuConv2d: r = interpretMcuConv(in(0), shp(0), in(1), shp(1), in(2), in(5), in(3)[0], in(4)[0], os, op.attrs); break;
    case OpKind::McuTruncate:
        r = in(0);
        for (float& v : r) v = std::min(127.0f, std::max(-128.0f, v));
        break;
    case OpKind::McuAdd:
    case OpKind::McuMultiply: {
        const float z1 = in(2)[0], z2 = in(3)[0], s1 = in(4)[0], s2 = in(5)[0], zy = in(6)[0], sy = in(7)[0];
        const bool mul = op.kind == OpKind::McuMultiply;
        std::vector<const Values*> ins{&in(0), &in(1)};
        r = elementwise(ins, {shp(0), shp(1)}, os, [&](const float* a) {
            const float t1 = (a[0] - z1) * s1, t2 = (a[1] - z2) * s2;
            const float u = mul ? t1 * t2 : t1 + t2;
            return roundHalfEven(u / sy) + zy;
        });
        break;
    }
    case OpKind::McuMean: r = interpretMcuMean(in(0), shp(0), n); break;
    case OpKind::Reshape:
    case OpKind::Cast: r = in(0); break;
    case OpKind::LogSoftmax: r = interpretLogSoftmax(in(0), os); break;
    case OpKind::CrossEntropyWithLogits: {
        double s = 0;
        for (std::size_t i = 0; i < in(0).size(); ++i) s -= static_cast<double>(in(0)[i]) * in(1)[i];
        r = {static_cast<float>(s)};
        break;
    }
    case OpKind::GreaterEqual: r = ew([](const float* a) { return a[0] >= a[1] ? 1.f : 0.f; }); break;
    case OpKind::LessEqual: r = ew([](const float* a) { return a[0] <= a[1] ? 1.f : 0.f; }); break;
    case OpKind::Multiply: r = ew([](const float* a) { return a[0] * a[1]; }); break;
    case OpKind::Divide: r = ew([](const float* a) { return a[0] / a[1]; }); break;
    case OpKind::Subtract: r = ew([](const float* a) { return a[0] - a[1]; }); break;
    case OpKind::Add: r = ew([](const float* a) { return a[0] + a[1]; }); break;
    case OpKind::Where: r = ew([](const float* a) { return a[0] != 0.f ? a[1] : a[2]; }); break;
    case OpKind::Negative: r = ew([](const float* a) { return -a[0]; }); break;
    case OpKind::Exp: r = ew([](const float* a) { return std::exp(a[0]); }); break;
    case OpKind::Zeros: r.assign(static_cast<std::size_t>(n), 0.f); break;
    case OpKind::Ones: r.assign(static_cast<std::size_t>(n), 1.f); break;
    case OpKind::Sum:
    case OpKind::Mean: r = interpretReduction(in(0), shp(0), op.attrs, op.kind == OpKind::Mean); break;
    case OpKind::Tile: {
        const TensorShape& xs = shp(0);
        r = gather(in(0), xs, os, [&](std::size_t d, const std::vector<int>& idx) { return idx[d] % xs[d]; });
        break;
    }
    case OpKind::Transpose: r = interpretTranspose(in(0), shp(0), os, op.attrs); break;
    case OpKind::StridedSlice: {
        const std::vector<int> begin = ints(op.attrs["begin"]);
        r = gather(in(0), shp(0), os, [&](std::size_t d, const std::vector<int>& idx) { return idx[d] + begin[d]; });
        break;
    }
    case OpKind::Conv2d: {
        const std::vector<double> acc = convolve(in(0), shp(0), in(1), shp(1), os, geometry(op.attrs), 0.f);
        r.assign(acc.begin(), acc.end());
        break;
    }
    case OpKind::Conv2dTranspose: r = interpretConvTranspose(in(0), shp(0), in(1), shp(1), os, op.attrs); break;
    }
    if (static_cast<std::int64_t>(r.size()) != n)
        throw std::logic_error(std::string("interpreter: ") + opTypeName(op.kind) + " produced the wrong size");
    values_[static_cast<std::size_t>(op.output)] = std::move(r);
}

ParameterStore syntheticQuantParameters(const TrainingGraph& g, const Network& net, unsigned seed)
{
    std::mt19937 rng(seed);
    auto uniformInt = [&](int lo, int hi) { return static_cast<float>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    ParameterStore p;
    GraphInterpreter run(g);
    std::vector<float> zero(g.tensors.size(), 0.f);   // zero point of each int8 activation
    auto put = [&](int tensor, std::vector<float> v) {
        p.set(g.tensor(tensor).name, v);
        run.bind(tensor, std::move(v));
    };
    auto fill = [&](int tensor, auto gen) {
        std::vector<float> v(static_cast<std::size_t>(g.tensor(tensor).elems()));
        for (float& x : v) x = gen();
        return v;
    };
    {
        std::vector<float> img = fill(g.input, [&] { return uniformInt(-128, 127); });
        put(g.input, img);
        zero[static_cast<std::size_t>(g.input)] = -128.f;
    }
    auto activated = [&](int layer) { return layer >= 0 && net.layer(layer).act != Activation::None; };
    // Root mean square (not the deviation: a 2-class head's two logits may be close but large).
    auto spreadOf = [](const std::vector<float>& v, float offset) {
        double s2 = 0;
        for (float x : v) s2 += (static_cast<double>(x) - offset) * (static_cast<double>(x) - offset);
        return std::max(1.0, std::sqrt(s2 / static_cast<double>(v.size())));
    };

    for (int i = 0; i < g.forward_ops; ++i) {
        const Op& op = g.op(i);
        if (op.phase != Phase::Forward) break;
        const bool act = activated(op.layer);
        // Post-activation outputs sit at zero point −128 (real 0); scales put the spread of the
        // accumulator over ~110 int8 steps, so a few values clamp at 127 and many at −128.
        const bool head = op.layer == net.convLayers().back();
        const float zy = act ? -128.f : uniformInt(-8, 8);
        const double target = act ? 110.0 : (head ? 30.0 : 55.0);   // logits rarely clamp
        switch (op.kind) {
        case OpKind::McuConv2d: {
            const Tensor& w = g.tensor(op.inputs[1]);
            put(op.inputs[1], fill(op.inputs[1], [&] { return uniformInt(-90, 90); }));
            put(op.inputs[2], fill(op.inputs[2], [&] { return uniformInt(-400, 400); }));
            put(op.inputs[3], {zero[static_cast<std::size_t>(op.inputs[0])]});
            put(op.inputs[4], {zy});
            std::vector<float> ones(static_cast<std::size_t>(w.shape[0]), 1.f);
            run.bind(op.inputs[5], ones);
            run.execute(i);   // unit scale: the output is the accumulator + zy
            // Per-tensor spread (a 1×1 map has one value per channel), per-channel jitter.
            const std::vector<float>& acc = run.value(op.output);
            const double spread = spreadOf(acc, zy);
            std::vector<float> s(static_cast<std::size_t>(w.shape[0]));
            for (float& x : s) x = static_cast<float>(target / spread * uniform(0.8, 1.25));
            put(op.inputs[5], s);
            run.execute(i);
            zero[static_cast<std::size_t>(op.output)] = zy;
            break;
        }
        case OpKind::McuAdd:
        case OpKind::McuMultiply: {
            const bool mul = op.kind == OpKind::McuMultiply;
            const float z1 = zero[static_cast<std::size_t>(op.inputs[0])], z2 = zero[static_cast<std::size_t>(op.inputs[1])];
            put(op.inputs[2], {z1});
            put(op.inputs[3], {z2});
            // A squeeze-excite gate is an h-sigmoid in [0, 1]: scale 1/255 at zero point −128.
            put(op.inputs[4], {static_cast<float>(mul ? 1.0 / 255.0 : 0.02 * uniform(0.7, 1.4))});
            put(op.inputs[5], {static_cast<float>(0.02 * uniform(0.7, 1.4))});
            put(op.inputs[6], {zy});
            run.bind(op.inputs[7], {1.f});
            run.execute(i);
            const std::vector<float>& v = run.value(op.output);
            put(op.inputs[7], {static_cast<float>(spreadOf(v, zy) / target)});
            run.execute(i);
            zero[static_cast<std::size_t>(op.output)] = zy;
            break;
        }
        default:
            run.execute(i);
            zero[static_cast<std::size_t>(op.output)] = op.inputs.empty() ? 0.f : zero[static_cast<std::size_t>(op.inputs[0])];
            break;
        }
    }
    // The label is the class with the lowest unclamped logit, so the loss and its gradient are
    // far from zero (int8 logits make softmax very peaked).
    std::vector<float> label(static_cast<std::size_t>(g.tensor(g.label).elems()), 0.f);
    if (net.loss == LossKind::CrossEntropy) {
        int headOut = -1;
        for (int i = 0; i < g.forward_ops; ++i)
            if (g.op(i).phase == Phase::Forward) headOut = g.op(i).output;
        const std::vector<float>& y = run.value(headOut);
        std::size_t best = 0;
        for (std::size_t c = 0; c < y.size(); ++c)
            if ((y[c] > -128.f && y[c] < y[best]) || y[best] <= -128.f) best = c;
        label[best] = 1.f;
    } else {
        for (float& x : label) x = uniformInt(-100, 100);
    }
    p.set("label", label);
    return p;
}

}  // namespace tinyscope
