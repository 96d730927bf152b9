#include "tinyengine/Int8Forward.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "tinyengine/Int8Kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>

namespace tinyscope {

using int8k::clamp8;

const char* int8ArithmeticName(Int8Arithmetic a)
{
    return a == Int8Arithmetic::TinyEngine ? "tinyengine" : a == Int8Arithmetic::Tflite ? "tflite" : "exact";
}

Int8Forward::Int8Forward(const TrainingGraph& g, const QuantizedParams& p, Int8Arithmetic arithmetic,
                         const std::map<std::string, std::vector<double>>* effectiveScales)
    : g_(g), arith_(arithmetic)
{
    const std::vector<std::string> bad = paramsMismatches(g, p);
    for (const std::string& m : bad)
        if (m.find("input") != 0 && m.find("label") != 0)
            throw InputError((p.source.empty() ? std::string("params") : p.source) + ": " + m);
    input_ = g.input;
    auto ints = [&](int t) {   // exact: int32 biases may be near 2^31 (the real file parks dead channels there)
        const NdArray& a = p.array(g.tensor(t).name);
        std::vector<std::int32_t> v(static_cast<std::size_t>(a.numel()));
        for (std::int64_t i = 0; i < a.numel(); ++i) v[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(ndValue(a, i));
        return v;
    };
    auto scalar = [&](int t) { return static_cast<float>(p.value(g.tensor(t).name)); };
    bool first = true;
    std::size_t convs = 0;
    for (int i = 0; i < g.forward_ops; ++i) {
        const Op& op = g.op(i);
        Int8Step s;
        s.kind = op.kind;
        s.out = op.output;
        const TensorShape& os = g.tensor(op.output).shape;
        s.n = shapeElems(os);
        s.outShape = os;
        switch (op.kind) {
        case OpKind::McuConv2d: {
            const TensorShape& xs = g.tensor(op.inputs[0]).shape;
            const TensorShape& ws = g.tensor(op.inputs[1]).shape;
            s.in = {op.inputs[0]};
            s.C = xs[1], s.H = xs[2], s.W = xs[3], s.O = ws[0], s.KH = ws[2], s.KW = ws[3], s.HO = os[2], s.WO = os[3];
            s.sh = op.attrs["strides"][0], s.sw = op.attrs["strides"][1];
            s.pt = op.attrs["padding"][0], s.pl = op.attrs["padding"][1], s.pb = op.attrs["padding"][2], s.pr = op.attrs["padding"][3];
            s.groups = op.attrs["groups"];
            s.conv = convs++;
            s.weight = ints(op.inputs[1]);
            s.bias = ints(op.inputs[2]);
            s.zx = static_cast<std::int32_t>(scalar(op.inputs[3]));
            s.zy = static_cast<std::int32_t>(scalar(op.inputs[4]));
            s.scale = p.floats(g.tensor(op.inputs[5]).name);
            if (arith_ == Int8Arithmetic::Tflite) {
                const std::string& key = g.tensor(op.inputs[5]).name;
                const std::vector<double>* given = nullptr;
                if (effectiveScales)
                    if (const auto it = effectiveScales->find(key); it != effectiveScales->end()) given = &it->second;
                if (given && given->size() != s.scale.size())
                    throw InputError("int8 forward: " + std::to_string(given->size()) + " TFLite effective scales for '" + key + "', the conv has " +
                                     std::to_string(s.scale.size()) + " channels");
                for (std::size_t o = 0; o < s.scale.size(); ++o)
                    s.mult.push_back(quantizeMultiplier(given ? (*given)[o] : static_cast<double>(s.scale[o])));
            }
            if (first) {
                const std::string w = g.tensor(op.inputs[1]).name;
                const std::string key = w.substr(0, w.size() - 7) + "_x_scale";   // strip "_weight"
                if (!p.hasScale(key))
                    throw InputError((p.source.empty() ? std::string("params") : p.source) + ": scale.json lacks '" + key +
                                     "', the input scale the int8 forward quantizes images with");
                in_scale_ = p.scales.at(key);
                in_zero_ = s.zx;
                first = false;
            }
            break;
        }
        case OpKind::McuAdd:
        case OpKind::McuMultiply:
            s.in = {op.inputs[0], op.inputs[1]};
            s.z1 = scalar(op.inputs[2]), s.z2 = scalar(op.inputs[3]), s.s1 = scalar(op.inputs[4]), s.s2 = scalar(op.inputs[5]);
            s.fzy = scalar(op.inputs[6]), s.sy = scalar(op.inputs[7]);
            s.shape1 = g.tensor(op.inputs[0]).shape;
            s.shape2 = g.tensor(op.inputs[1]).shape;
            if (arith_ == Int8Arithmetic::Tflite) {
                if (op.kind == OpKind::McuAdd) s.add = std::make_shared<const TfliteAdd>(s.s1, s.s2, s.sy);
                else s.mult.push_back(tfliteMulMultiplier(s.s1, s.s2, s.sy));
            }
            break;
        case OpKind::McuTruncate:
        case OpKind::McuMean:
            s.in = {op.inputs[0]};
            s.C = g.tensor(op.inputs[0]).shape[1];
            s.H = g.tensor(op.inputs[0]).shape[2];
            s.W = g.tensor(op.inputs[0]).shape[3];
            if (op.kind == OpKind::McuTruncate) logits_ = op.output;
            break;
        default:
            continue;   // reshape / cast / the loss: not part of the int8 inference
        }
        steps_.push_back(std::move(s));
    }
    if (steps_.empty() || logits_ < 0) throw InputError(g.model + ": the graph has no int8 forward ops");
    classes_ = static_cast<int>(g.tensor(logits_).elems());
}

std::vector<Int8ConvShape> Int8Forward::convShapes() const
{
    std::vector<Int8ConvShape> out;
    for (const Int8Step& s : steps_)
        if (s.kind == OpKind::McuConv2d)
            out.push_back({s.C, s.H, s.W, s.O, s.HO, s.WO, s.KH, s.KW, s.sh, s.sw, s.pt, s.pl, s.pb, s.pr, s.groups, s.zx, &s.weight});
    return out;
}

std::vector<std::int8_t> Int8Forward::quantizeInput(const float* chw) const
{
    const std::int64_t n = g_.tensor(input_).elems();
    std::vector<std::int8_t> q(static_cast<std::size_t>(n));
    const float inv = static_cast<float>(1.0 / in_scale_);
    for (std::int64_t i = 0; i < n; ++i)
        q[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(int8k::quantizeInput(chw[i], inv, in_zero_));
    return q;
}

void Int8Forward::execute(const Int8Step& s, std::vector<std::vector<std::int32_t>>& v) const
{
    std::vector<std::int32_t>& out = v[static_cast<std::size_t>(s.out)];
    out.resize(static_cast<std::size_t>(s.n));
    switch (s.kind) {
    case OpKind::McuConv2d: {
        const std::vector<std::int32_t>& x = v[static_cast<std::size_t>(s.in[0])];
        const int Cg = s.C / s.groups, Og = s.O / s.groups, plane = s.HO * s.WO;
        std::vector<std::int32_t> accAll(static_cast<std::size_t>(s.O) * plane, 0);
        if (!accumulator_ || !accumulator_->accumulate(s.conv, x.data(), accAll.data())) {
            // (x − zx), zero padded: padded positions contribute nothing, as in conv(x − zx, W).
            const int Hp = s.H + s.pt + s.pb, Wp = s.W + s.pl + s.pr;
            std::vector<std::int32_t> xp(static_cast<std::size_t>(s.C) * Hp * Wp, 0);
            for (int c = 0; c < s.C; ++c)
                for (int y = 0; y < s.H; ++y) {
                    const std::int32_t* src = &x[(static_cast<std::size_t>(c) * s.H + y) * s.W];
                    std::int32_t* dst = &xp[(static_cast<std::size_t>(c) * Hp + y + s.pt) * Wp + s.pl];
                    for (int xx = 0; xx < s.W; ++xx) dst[xx] = src[xx] - s.zx;
                }
            for (int o = 0; o < s.O; ++o) {
                std::int32_t* acc = &accAll[static_cast<std::size_t>(o) * plane];
                const int c0 = (o / Og) * Cg;
                for (int c = 0; c < Cg; ++c) {
                    const std::int32_t* xc = &xp[static_cast<std::size_t>(c0 + c) * Hp * Wp];
                    for (int ky = 0; ky < s.KH; ++ky)
                        for (int kx = 0; kx < s.KW; ++kx) {
                            const std::int32_t w = s.weight[((static_cast<std::size_t>(o) * Cg + c) * s.KH + ky) * s.KW + kx];
                            if (w == 0) continue;
                            for (int oy = 0; oy < s.HO; ++oy) {
                                const std::int32_t* r = xc + static_cast<std::size_t>(oy * s.sh + ky) * Wp + kx;
                                std::int32_t* a = &acc[static_cast<std::size_t>(oy) * s.WO];
                                if (s.sw == 1)
                                    for (int ox = 0; ox < s.WO; ++ox) a[ox] += w * r[ox];
                                else
                                    for (int ox = 0; ox < s.WO; ++ox) a[ox] += w * r[ox * s.sw];
                            }
                        }
                }
            }
        }
        for (int o = 0; o < s.O; ++o) {
            const std::int32_t* acc = &accAll[static_cast<std::size_t>(o) * plane];
            const std::size_t oc = static_cast<std::size_t>(o);
            const auto bu = static_cast<std::uint32_t>(s.bias[oc]);
            std::int32_t* y = &out[oc * plane];
            if (arith_ == Int8Arithmetic::Tflite)
                for (int i = 0; i < plane; ++i) y[i] = int8k::convTflite(acc[i], bu, s.mult[oc], s.zy);
            else if (arith_ == Int8Arithmetic::TinyEngine)
                for (int i = 0; i < plane; ++i) y[i] = int8k::convTinyEngine(acc[i], bu, s.scale[oc], s.zy);
            else
                for (int i = 0; i < plane; ++i) y[i] = int8k::convExact(acc[i], static_cast<float>(s.bias[oc]), s.scale[oc], s.zy);
        }
        break;
    }
    case OpKind::McuTruncate: {
        const std::vector<std::int32_t>& x = v[static_cast<std::size_t>(s.in[0])];
        for (std::int64_t i = 0; i < s.n; ++i) out[static_cast<std::size_t>(i)] = clamp8(x[static_cast<std::size_t>(i)]);
        break;
    }
    case OpKind::McuMean: {
        const std::vector<std::int32_t>& x = v[static_cast<std::size_t>(s.in[0])];
        const int hw = s.H * s.W;
        if (arith_ == Int8Arithmetic::TinyEngine || arith_ == Int8Arithmetic::Tflite) {   // avg_pooling / AVERAGE_POOL_2D: rounded integer division
            for (int c = 0; c < s.C; ++c) {
                std::int32_t sum = 0;
                for (int i = 0; i < hw; ++i) sum += x[static_cast<std::size_t>(c) * hw + i];
                out[static_cast<std::size_t>(c)] = int8k::meanRounded(sum, hw);
            }
            break;
        }
        for (int c = 0; c < s.C; ++c) {
            double sum = 0;
            for (int i = 0; i < hw; ++i) sum += x[static_cast<std::size_t>(c) * hw + i];
            out[static_cast<std::size_t>(c)] = int8k::meanExact(sum, hw);
        }
        break;
    }
    case OpKind::McuAdd:
    case OpKind::McuMultiply: {
        const std::vector<std::int32_t>& a = v[static_cast<std::size_t>(s.in[0])];
        const std::vector<std::int32_t>& b = v[static_cast<std::size_t>(s.in[1])];
        const bool mul = s.kind == OpKind::McuMultiply;
        // Operands are [1,C,H,W] or a [1,C,1,1] gate broadcast over H, W.
        const std::int64_t plane = s.outShape.size() == 4 ? static_cast<std::int64_t>(s.outShape[2]) * s.outShape[3] : 1;
        const bool aGate = shapeElems(s.shape1) != s.n, bGate = shapeElems(s.shape2) != s.n;
        if (arith_ == Int8Arithmetic::Tflite) {
            const auto z1 = static_cast<std::int32_t>(s.z1), z2 = static_cast<std::int32_t>(s.z2), zy = static_cast<std::int32_t>(s.fzy);
            for (std::int64_t i = 0; i < s.n; ++i)
                out[static_cast<std::size_t>(i)] = int8k::addMulTflite(mul, a[static_cast<std::size_t>(aGate ? i / plane : i)],
                                                                       b[static_cast<std::size_t>(bGate ? i / plane : i)], z1, z2, zy,
                                                                       mul ? &s.mult[0] : nullptr, s.add.get());
            break;
        }
        const bool tinyEngine = arith_ == Int8Arithmetic::TinyEngine;
        for (std::int64_t i = 0; i < s.n; ++i)
            out[static_cast<std::size_t>(i)] = int8k::addMulFloat(mul, tinyEngine, a[static_cast<std::size_t>(aGate ? i / plane : i)],
                                                                  b[static_cast<std::size_t>(bGate ? i / plane : i)], s.z1, s.z2, s.s1, s.s2, s.sy,
                                                                  s.fzy);
        break;
    }
    default:
        break;
    }
}

std::vector<std::vector<std::int32_t>> Int8Forward::runAll(const std::vector<std::int8_t>& input) const
{
    if (static_cast<std::int64_t>(input.size()) != g_.tensor(input_).elems())
        throw InputError("int8 forward: " + std::to_string(input.size()) + " input values for " + std::to_string(g_.tensor(input_).elems()));
    std::vector<std::vector<std::int32_t>> v(g_.tensors.size());
    v[static_cast<std::size_t>(input_)].assign(input.begin(), input.end());
    for (const Int8Step& s : steps_) execute(s, v);
    return v;
}

std::vector<std::int8_t> Int8Forward::run(const std::vector<std::int8_t>& input) const
{
    const std::vector<std::vector<std::int32_t>> v = runAll(input);
    const std::vector<std::int32_t>& l = v[static_cast<std::size_t>(logits_)];
    return std::vector<std::int8_t>(l.begin(), l.end());
}

int Int8Forward::predict(const float* chw) const
{
    const std::vector<std::int8_t> l = run(quantizeInput(chw));
    return static_cast<int>(std::max_element(l.begin(), l.end()) - l.begin());
}

Int8Top1 evaluateInt8Batches(const ImageDataset& data, const std::vector<std::size_t>& items, int resolution, const Normalization& norm,
                             int threads, const JobControl& job, const std::function<void(const float*, std::size_t, int*)>& predict)
{
    const auto t0 = std::chrono::steady_clock::now();
    Int8Top1 r;
    r.classes = static_cast<int>(data.classNames().size());
    const std::size_t classes = static_cast<std::size_t>(r.classes);
    r.confusion.assign(classes * classes, 0);
    const std::size_t chunk = 100;
    std::vector<int> predicted(chunk);
    for (std::size_t start = 0; start < items.size(); start += chunk) {
        job.check();
        const std::vector<std::size_t> part(items.begin() + static_cast<std::ptrdiff_t>(start),
                                            items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), start + chunk)));
        const Batch b = loadBatch(data, part, resolution, norm, threads);
        r.skipped += b.skipped.size();
        predict(b.pixels.data(), b.size(), predicted.data());
        for (std::size_t i = 0; i < b.size(); ++i) {
            r.correct += predicted[i] == b.labels[i];
            const auto label = static_cast<std::size_t>(b.labels[i]), guess = static_cast<std::size_t>(predicted[i]);
            if (label < classes && guess < classes) ++r.confusion[label * classes + guess];
        }
        r.images += b.size();
        job.report(std::min(items.size(), start + chunk), items.size(), "int8 forward");
    }
    r.top1 = r.images ? 100.0 * static_cast<double>(r.correct) / static_cast<double>(r.images) : 0.0;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

Int8Top1 evaluateInt8(const Int8Forward& f, const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                      const Normalization& norm, int threads, const JobControl& job)
{
    const std::size_t per = static_cast<std::size_t>(3) * resolution * resolution;
    return evaluateInt8Batches(data, items, resolution, norm, threads, job, [&](const float* pixels, std::size_t n, int* classes) {
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t i = next++; i < n; i = next++) classes[i] = f.predict(pixels + i * per);
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(work);
        work();
        for (std::thread& t : pool) t.join();
    });
}

}  // namespace tinyscope
