#include "nn/onednn/OneDnnInt8Plan.h"

#include "Error.h"
#include "nn/ShardPool.h"
#include "nn/onednn/OneDnnCommon.h"
#include "tinyengine/Int8Kernels.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace tinyscope {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using onednn::Buffer;

constexpr double kExact = 16777216.0;   // 2^24: float32 holds every integer up to this exactly

// The element loops. Each is compiled twice (AVX2 and the x86-64 baseline, chosen at load time):
// the AVX2 copy vectorises the rounding (vroundps) that the baseline calls libm for. This file is
// compiled with -fno-trapping-math (core/CMakeLists.txt), without which GCC vectorises none of
// them; it changes no value (floating-point exception flags only). Neither target has FMA, so no
// multiply-add is contracted: both copies compute what Int8Forward's loops compute, element by
// element (the test compares every tensor).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TS_CLONES
#endif

// out = x − d over `count` values (d: the conv's zero point minus the stored shift); returns the
// largest |x − d|.
TS_CLONES float shiftAndMax(const float* x, std::size_t count, float d, float* out)
{
    float most = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const float v = x[i] - d;
        out[i] = v;
        const float a = std::fabs(v);
        most = a > most ? a : most;
    }
    return most;
}

// Requantise `positions` × O conv sums (NHWC, exact integers in float) and clamp to int8: the
// conv + truncation pair of the graph, in each arithmetic.
TS_CLONES void requantExact(const float* acc, std::size_t positions, int O, const float* bias, const float* scale, std::int32_t zy, std::int32_t shift,
                            float* out)
{
    for (std::size_t p = 0; p < positions; ++p)
        for (int o = 0; o < O; ++o) {
            const std::size_t i = p * static_cast<std::size_t>(O) + static_cast<std::size_t>(o);
            out[i] = static_cast<float>(int8k::clamp8(int8k::convExact(static_cast<std::int32_t>(acc[i]), bias[o], scale[o], zy)) - shift);
        }
}

TS_CLONES void requantTinyEngine(const float* acc, std::size_t positions, int O, const std::uint32_t* bias, const float* scale, std::int32_t zy,
                                 std::int32_t shift, float* out)
{
    for (std::size_t p = 0; p < positions; ++p)
        for (int o = 0; o < O; ++o) {
            const std::size_t i = p * static_cast<std::size_t>(O) + static_cast<std::size_t>(o);
            out[i] = static_cast<float>(int8k::clamp8(int8k::convTinyEngine(static_cast<std::int32_t>(acc[i]), bias[o], scale[o], zy)) - shift);
        }
}

void requantTflite(const float* acc, std::size_t positions, int O, const std::uint32_t* bias, const QuantizedMultiplier* mult, std::int32_t zy,
                   std::int32_t shift, float* out)
{
    for (std::size_t p = 0; p < positions; ++p)
        for (int o = 0; o < O; ++o) {
            const std::size_t i = p * static_cast<std::size_t>(O) + static_cast<std::size_t>(o);
            out[i] = static_cast<float>(int8k::clamp8(int8k::convTflite(static_cast<std::int32_t>(acc[i]), bias[o], mult[o], zy)) - shift);
        }
}

// One row of C channels of an add or multiply and the truncation after it.
TS_CLONES void addMulRowFloat(const float* a, const float* b, std::size_t C, bool mul, bool tinyEngine, float z1, float z2, float s1, float s2,
                              float sy, float fzy, const std::int32_t shift[3], float* out)
{
    for (std::size_t c = 0; c < C; ++c)
        out[c] = static_cast<float>(int8k::clamp8(int8k::addMulFloat(mul, tinyEngine, static_cast<std::int32_t>(a[c]) + shift[0],
                                                                     static_cast<std::int32_t>(b[c]) + shift[1], z1, z2, s1, s2, sy, fzy)) -
                                    shift[2]);
}

void addMulRowTflite(const float* a, const float* b, std::size_t C, bool mul, const Int8Step& s, const std::int32_t shift[3], float* out)
{
    const auto z1 = static_cast<std::int32_t>(s.z1), z2 = static_cast<std::int32_t>(s.z2), zy = static_cast<std::int32_t>(s.fzy);
    for (std::size_t c = 0; c < C; ++c)
        out[c] = static_cast<float>(int8k::clamp8(int8k::addMulTflite(mul, static_cast<std::int32_t>(a[c]) + shift[0],
                                                                       static_cast<std::int32_t>(b[c]) + shift[1], z1, z2, zy,
                                                                       mul ? &s.mult[0] : nullptr, s.add.get())) -
                                    shift[2]);
}

}  // namespace

struct OneDnnInt8Plan::Impl {
    const Int8Forward& f;
    int n = 0;
    Int8Arithmetic arith = Int8Arithmetic::Exact;
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{eng};

    struct Dims {
        int C = 0, H = 1, W = 1;
        std::size_t per() const { return static_cast<std::size_t>(C) * H * W; }
    };
    std::map<int, Dims> dims;          // per value slot, one image
    std::map<int, int> bufferOf;       // value slot -> buffers index
    // Every slot holds int8 values minus its shift: the zero point of the convs that read it, so
    // a conv reads its shifted input (x − zx, zero-padded) straight from the slot.
    std::map<int, std::int32_t> shift;
    std::int32_t shiftOf(int slot) const
    {
        const auto it = shift.find(slot);
        return it == shift.end() ? 0 : it->second;
    }
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::unique_ptr<Buffer> shifted, acc, scratch;
    bool keep = false, checkAll = false;

    struct Conv {
        std::optional<dnnl::convolution_forward> prim;
        memory src, dst, weights, scratchpad;
        double sumAbsW = 0;            // largest Σ|w| of one output channel
        bool direct = false;           // reads its input slot as is: shifted by zx, sums always exact
        std::vector<float> bias;       // exact arithmetic
        std::vector<std::uint32_t> biasBits;   // TinyEngine / TFLite (the int32 bias's bits)
    };
    struct Op {
        const Int8Step* step = nullptr;
        int conv = -1;                 // index into convs (a conv fused with its truncation)
        int out = -1;                  // the slot written (for a conv: its truncation's output)
    };
    std::vector<Conv> convs;
    std::vector<Op> ops;
    int input = -1, logits = -1, classes = 0;

    float* at(int slot) const { return buffers[static_cast<std::size_t>(bufferOf.at(slot))]->data; }

    explicit Impl(const Int8Forward& forward) : f(forward) {}

    Dims dimsOf(int slot) const
    {
        const TensorShape& s = f.graph().tensor(slot).shape;
        Dims d;
        d.C = s.size() > 1 ? s[1] : 1;
        d.H = s.size() > 2 ? s[2] : 1;
        d.W = s.size() > 3 ? s[3] : 1;
        return d;
    }

    void build()
    {
        arith = f.arithmetic();
        input = f.inputTensor();
        logits = f.logitsTensor();
        classes = f.classes();
        const std::vector<Int8Step>& steps = f.steps();
        // Readers of every slot, to fuse each conv with its truncation.
        std::map<int, std::vector<std::size_t>> readers;
        for (std::size_t i = 0; i < steps.size(); ++i)
            for (int in : steps[i].in) readers[in].push_back(i);
        std::size_t most = dimsOf(input).per();
        dims[input] = dimsOf(input);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const Int8Step& s = steps[i];
            const std::string where = "op " + std::to_string(i) + " (" + f.graph().tensor(s.out).name + ")";
            most = std::max(most, dimsOf(s.out).per());
            if (s.kind == OpKind::McuTruncate) continue;   // fused into its conv below
            for (int in : s.in)
                if (!dims.count(in)) throw OneDnnRefused("int8 plan: " + where + " reads a tensor no op before it wrote");
            Op op;
            op.step = &s;
            op.out = s.out;
            if (s.kind != OpKind::McuConv2d && s.kind != OpKind::McuMean && s.kind != OpKind::McuAdd && s.kind != OpKind::McuMultiply)
                throw OneDnnRefused("int8 plan: no kernel for " + where);
            if (s.kind != OpKind::McuMean) {   // int32 results: clamped by the one truncation that reads them
                const auto& r = readers[s.out];
                if (r.size() != 1 || steps[r[0]].kind != OpKind::McuTruncate || s.out == logits)
                    throw OneDnnRefused("int8 plan: the output of " + where + " is read by something other than one truncation");
                op.out = steps[r[0]].out;
            }
            if (s.kind == OpKind::McuConv2d) {
                op.conv = static_cast<int>(convs.size());
                convs.push_back(makeConv(s, where));
            }
            dims[op.out] = dimsOf(op.out);
            ops.push_back(op);
        }
        for (const Int8Step& s : steps)
            if (s.kind == OpKind::McuTruncate && !dims.count(s.out))
                throw OneDnnRefused("int8 plan: a truncation without its conv (" + f.graph().tensor(s.out).name + ")");
        if (!dims.count(logits)) throw OneDnnRefused("int8 plan: the logits are not an op's output");
        // Shifts: a slot read by convs of one zero point is stored minus it. Every slot holds
        // clamped int8 values (the input, truncations, means of them), so |x − zx| is at most
        // max(127 − zx, zx + 128) and a conv whose Σ|w| keeps that below 2^24 needs no check.
        std::map<int, std::vector<std::int32_t>> zeroPoints;
        for (const Op& op : ops)
            if (op.conv >= 0) zeroPoints[op.step->in[0]].push_back(op.step->zx);
        for (auto& [slot, zs] : zeroPoints)
            if (std::all_of(zs.begin(), zs.end(), [&](std::int32_t z) { return z == zs.front(); })) shift[slot] = zs.front();
        for (const Op& op : ops) {
            if (op.conv < 0) continue;
            const Int8Step& s = *op.step;
            const double bound = std::max(127 - s.zx, s.zx + 128);
            convs[static_cast<std::size_t>(op.conv)].direct = shiftOf(s.in[0]) == s.zx && bound * convs[static_cast<std::size_t>(op.conv)].sumAbsW < kExact;
        }
        const std::size_t cap = most * static_cast<std::size_t>(n);
        shifted = std::make_unique<Buffer>(cap);
        acc = std::make_unique<Buffer>(cap);
        std::size_t scratchBytes = 0;
        for (const Conv& c : convs) scratchBytes = std::max(scratchBytes, c.scratchpad.get_desc().get_size());
        scratch = std::make_unique<Buffer>((scratchBytes + sizeof(float) - 1) / sizeof(float));
        for (Conv& c : convs) {
            c.src = memory(c.src.get_desc(), eng, shifted->data);
            c.dst = memory(c.dst.get_desc(), eng, acc->data);
            c.scratchpad = memory(c.scratchpad.get_desc(), eng, scratch->data);
        }
        assignBuffers(cap);
    }

    // Buffers by liveness: an op's output takes a free buffer; an input is freed after its last reader.
    void assignBuffers(std::size_t cap)
    {
        std::map<int, std::size_t> last;
        for (std::size_t i = 0; i < ops.size(); ++i)
            for (int in : ops[i].step->in) last[in] = i;
        std::vector<int> free;
        auto take = [&](int slot) {
            if (free.empty() || keep) {
                buffers.push_back(std::make_unique<Buffer>(cap));
                bufferOf[slot] = static_cast<int>(buffers.size()) - 1;
            } else {
                bufferOf[slot] = free.back();
                free.pop_back();
            }
        };
        take(input);
        for (std::size_t i = 0; i < ops.size(); ++i) {
            take(ops[i].out);
            for (int in : ops[i].step->in)
                if (last[in] == i && in != logits) free.push_back(bufferOf.at(in));
            // A conv's truncation output is also what later ops read; nothing else to free.
        }
    }

    Conv makeConv(const Int8Step& s, const std::string& where)
    {
        Conv c;
        const int Cg = s.C / s.groups, per = Cg * s.KH * s.KW;
        std::vector<float> w(s.weight.size());
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(s.weight[i]);
        for (int o = 0; o < s.O; ++o) {
            double sum = 0;
            for (int i = 0; i < per; ++i) sum += std::abs(static_cast<double>(s.weight[static_cast<std::size_t>(o) * per + i]));
            c.sumAbsW = std::max(c.sumAbsW, sum);
        }
        for (std::int32_t b : s.bias) {
            c.bias.push_back(static_cast<float>(b));
            c.biasBits.push_back(static_cast<std::uint32_t>(b));
        }
        try {
            const memory::dims wdims = s.groups == 1 ? memory::dims{s.O, s.C, s.KH, s.KW} : memory::dims{s.groups, s.O / s.groups, Cg, s.KH, s.KW};
            const memory::desc wUser(wdims, Dt::f32, s.groups == 1 ? Tag::oihw : Tag::goihw), wAny(wdims, Dt::f32, Tag::any);
            const memory::desc src({n, s.C, s.H, s.W}, Dt::f32, Tag::nhwc), dst({n, s.O, s.HO, s.WO}, Dt::f32, Tag::nhwc);
            dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wAny, dst,
                                              {s.sh, s.sw}, {s.pt, s.pl}, {s.pb, s.pr});
            dnnl::primitive_attr attr;
            attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
            dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
            memory user(wUser, eng, w.data());
            c.weights = memory(pd.weights_desc(), eng);
            dnnl::reorder(user, c.weights).execute(stream, user, c.weights);
            stream.wait();
            c.src = memory(src, eng, nullptr);
            c.dst = memory(dst, eng, nullptr);
            c.scratchpad = memory(pd.scratchpad_desc(), eng, nullptr);
            c.prim.emplace(pd);
        } catch (const dnnl::error& e) {
            throw OneDnnRefused("int8 plan: oneDNN refused " + where + " (batch " + std::to_string(n) + "): " + e.what());
        }
        return c;
    }

    void quantizeInput(const float* images)
    {
        const Dims d = dims.at(input);
        const std::size_t hw = static_cast<std::size_t>(d.H) * d.W;
        const float inv = static_cast<float>(1.0 / f.inputScale());
        const std::int32_t zero = f.inputZero(), sh = shiftOf(input);
        float* out = at(input);
        for (int b = 0; b < n; ++b)
            for (int c = 0; c < d.C; ++c) {
                const float* src = images + (static_cast<std::size_t>(b) * d.C + c) * hw;
                float* dst = out + static_cast<std::size_t>(b) * hw * d.C + c;
                for (std::size_t p = 0; p < hw; ++p) dst[p * d.C] = static_cast<float>(int8k::quantizeInput(src[p], inv, zero) - sh);
            }
    }

    bool conv(const Op& op)
    {
        const Int8Step& s = *op.step;
        const Conv& c = convs[static_cast<std::size_t>(op.conv)];
        if (c.direct && !checkAll) {
            c.src.set_data_handle(at(s.in[0]));
        } else {   // another shift, or sums that might leave float32's exact range: shift a copy and check
            const std::size_t inCount = dims.at(s.in[0]).per() * n;
            const float most = shiftAndMax(at(s.in[0]), inCount, static_cast<float>(s.zx - shiftOf(s.in[0])), shifted->data);
            if (static_cast<double>(most) * c.sumAbsW >= kExact) return false;   // a partial sum might not be exact
            c.src.set_data_handle(shifted->data);
        }
        c.prim->execute(stream, {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, c.dst}, {DNNL_ARG_SCRATCHPAD, c.scratchpad}});
        stream.wait();
        const std::size_t positions = static_cast<std::size_t>(n) * s.HO * s.WO;
        float* out = at(op.out);
        const std::int32_t sh = shiftOf(op.out);
        if (arith == Int8Arithmetic::Tflite) requantTflite(acc->data, positions, s.O, c.biasBits.data(), s.mult.data(), s.zy, sh, out);
        else if (arith == Int8Arithmetic::TinyEngine) requantTinyEngine(acc->data, positions, s.O, c.biasBits.data(), s.scale.data(), s.zy, sh, out);
        else requantExact(acc->data, positions, s.O, c.bias.data(), s.scale.data(), s.zy, sh, out);
        return true;
    }

    void mean(const Op& op)
    {
        const Int8Step& s = *op.step;
        const Dims d = dims.at(s.in[0]);
        const int hw = d.H * d.W;
        const float* x = at(s.in[0]);
        float* out = at(op.out);
        const bool rounded = arith != Int8Arithmetic::Exact;
        const std::int32_t shiftIn = shiftOf(s.in[0]), shiftOut = shiftOf(op.out);
        std::vector<double> sums(static_cast<std::size_t>(d.C));
        for (int b = 0; b < n; ++b) {
            std::fill(sums.begin(), sums.end(), 0.0);
            const float* xb = x + static_cast<std::size_t>(b) * hw * d.C;
            for (int p = 0; p < hw; ++p)
                for (int c = 0; c < d.C; ++c) sums[static_cast<std::size_t>(c)] += xb[static_cast<std::size_t>(p) * d.C + c];
            // Integer sums (the stored values plus hw shifts): exact in double in any order, and in
            // int32 as Int8Forward sums them.
            for (int c = 0; c < d.C; ++c) {
                const double sum = sums[static_cast<std::size_t>(c)] + static_cast<double>(hw) * shiftIn;
                out[static_cast<std::size_t>(b) * d.C + c] = static_cast<float>(
                    (rounded ? int8k::meanRounded(static_cast<std::int32_t>(sum), hw) : int8k::meanExact(sum, hw)) - shiftOut);
            }
        }
    }

    // Add or multiply, and the truncation that reads it.
    void addMul(const Op& op)
    {
        const Int8Step& s = *op.step;
        const bool mul = s.kind == OpKind::McuMultiply;
        const Dims d = dims.at(op.out);
        const std::size_t per = d.per(), hw = static_cast<std::size_t>(d.H) * d.W, C = static_cast<std::size_t>(d.C);
        // Operands are the output's shape or a per-channel gate broadcast over H, W.
        const bool aGate = shapeElems(s.shape1) != s.n, bGate = shapeElems(s.shape2) != s.n;
        const float *a = at(s.in[0]), *b = at(s.in[1]);
        float* out = at(op.out);
        const bool tflite = arith == Int8Arithmetic::Tflite, tinyEngine = arith == Int8Arithmetic::TinyEngine;
        const std::int32_t shifts[3] = {shiftOf(s.in[0]), shiftOf(s.in[1]), shiftOf(op.out)};
        for (int im = 0; im < n; ++im)
            for (std::size_t p = 0; p < hw; ++p) {
                const std::size_t row = static_cast<std::size_t>(im) * per + p * C, gate = static_cast<std::size_t>(im) * C;
                const float *ra = a + (aGate ? gate : row), *rb = b + (bGate ? gate : row);
                if (tflite) addMulRowTflite(ra, rb, C, mul, s, shifts, out + row);
                else addMulRowFloat(ra, rb, C, mul, tinyEngine, s.z1, s.z2, s.s1, s.s2, s.sy, s.fzy, shifts, out + row);
            }
    }
};

OneDnnInt8Plan::OneDnnInt8Plan(const Int8Forward& forward, int batch) : impl_(std::make_unique<Impl>(forward))
{
    if (batch < 1) throw OneDnnRefused("int8 plan: batch size must be at least 1, got " + std::to_string(batch));
    impl_->n = batch;
    const onednn::OneThreadScope oneThread;   // single-threaded primitives (OneDnnCommon.h)
    impl_->build();
}

OneDnnInt8Plan::~OneDnnInt8Plan() = default;

int OneDnnInt8Plan::batch() const { return impl_->n; }

void OneDnnInt8Plan::keepAll(bool keep)
{
    Impl& p = *impl_;
    if (keep == p.keep) return;
    p.keep = keep;
    p.buffers.clear();
    p.bufferOf.clear();
    p.assignBuffers(p.shifted->count);
}

void OneDnnInt8Plan::checkEveryConv(bool check) { impl_->checkAll = check; }

bool OneDnnInt8Plan::run(const float* images, std::int32_t* logits)
{
    Impl& p = *impl_;
    const onednn::OneThreadScope oneThread;
    p.quantizeInput(images);
    for (const Impl::Op& op : p.ops) {
        if (op.conv >= 0) {
            if (!p.conv(op)) return false;
        } else if (op.step->kind == OpKind::McuMean) {
            p.mean(op);
        } else {
            p.addMul(op);
        }
    }
    const float* l = p.at(p.logits);
    const std::size_t count = static_cast<std::size_t>(p.n) * p.classes;
    const std::int32_t sh = p.shiftOf(p.logits);
    for (std::size_t i = 0; i < count; ++i) logits[i] = static_cast<std::int32_t>(l[i]) + sh;
    return true;
}

std::vector<std::int32_t> OneDnnInt8Plan::tensor(int id, int image) const
{
    const Impl& p = *impl_;
    if (!p.keep || !p.dims.count(id) || image < 0 || image >= p.n) return {};
    const Impl::Dims d = p.dims.at(id);
    const std::size_t hw = static_cast<std::size_t>(d.H) * d.W;
    const float* x = p.at(id) + static_cast<std::size_t>(image) * d.per();
    std::vector<std::int32_t> out(d.per());
    const std::int32_t sh = p.shiftOf(id);
    for (int c = 0; c < d.C; ++c)
        for (std::size_t q = 0; q < hw; ++q) out[static_cast<std::size_t>(c) * hw + q] = static_cast<std::int32_t>(x[q * d.C + c]) + sh;
    return out;
}

// ---- the engine ----

namespace {
constexpr int kPlanBatch = 8;   // images per plan run: bounds a plan's buffers at large resolutions
int partSize(int n, int parts, int p) { return n / parts + (p < n % parts ? 1 : 0); }
int argmax(const std::int32_t* l, int n) { return static_cast<int>(std::max_element(l, l + n) - l); }
}  // namespace

OneDnnInt8Engine::OneDnnInt8Engine(const Int8Forward& forward) : forward_(forward) {}
OneDnnInt8Engine::~OneDnnInt8Engine() = default;

OneDnnInt8Plan& OneDnnInt8Engine::plan(int batch, int part)
{
    const auto key = std::make_pair(batch, part);
    auto it = plans_.find(key);
    if (it == plans_.end()) it = plans_.emplace(key, std::make_unique<OneDnnInt8Plan>(forward_, batch)).first;
    return *it->second;
}

void OneDnnInt8Engine::prepareFor(int n, int parts)
{
    for (int p = 0; p < parts; ++p) {
        const int size = partSize(n, parts, p);
        plan(std::min(kPlanBatch, size), p);
        if (size > kPlanBatch && size % kPlanBatch) plan(size % kPlanBatch, p);
    }
}

void OneDnnInt8Engine::predict(const float* images, int n, int threads, int* classes)
{
    if (n <= 0) return;
    const TensorShape& in = forward_.graph().tensor(forward_.inputTensor()).shape;
    const std::size_t imageFloats = static_cast<std::size_t>(shapeElems(in));
    const int parts = std::max(1, std::min(threads, n));
    if (refused_.empty()) {
        try {
            prepareFor(n, parts);
        } catch (const OneDnnRefused& e) {
            refused_ = e.what();
        }
    }
    if (!refused_.empty()) {
        for (int i = 0; i < n; ++i) classes[i] = forward_.predict(images + static_cast<std::size_t>(i) * imageFloats);
        onLoops_ += static_cast<std::size_t>(n);
        return;
    }
    const int k = forward_.classes();
    std::vector<int> first(static_cast<std::size_t>(parts) + 1, 0);
    for (int p = 0; p < parts; ++p) first[p + 1] = first[p] + partSize(n, parts, p);
    std::vector<std::size_t> loops(static_cast<std::size_t>(parts), 0);
    auto part = [&](int p) {
        std::vector<std::int32_t> logits(static_cast<std::size_t>(kPlanBatch) * k);
        for (int at = first[p]; at < first[p + 1];) {
            const int m = std::min(kPlanBatch, first[p + 1] - at);
            const float* x = images + static_cast<std::size_t>(at) * imageFloats;
            if (plan(m, p).run(x, logits.data())) {
                for (int i = 0; i < m; ++i) classes[at + i] = argmax(&logits[static_cast<std::size_t>(i) * k], k);
            } else {   // outside float32's exact range: Int8Forward, image by image
                for (int i = 0; i < m; ++i) classes[at + i] = forward_.predict(x + static_cast<std::size_t>(i) * imageFloats);
                loops[static_cast<std::size_t>(p)] += static_cast<std::size_t>(m);
            }
            at += m;
        }
    };
    if (parts == 1) {
        part(0);
    } else {
        if (!pool_ || pool_->threads() != parts) pool_ = std::make_unique<ShardPool>(parts);
        pool_->run(parts, part);
    }
    for (std::size_t l : loops) onLoops_ += l;
}

Int8Top1 evaluateInt8OnOneDnn(const Int8Forward& f, const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                              const Normalization& norm, int threads, const JobControl& job, std::string* note)
{
    OneDnnInt8Engine engine(f);
    threads = std::max(1, threads);
    const Int8Top1 r = evaluateInt8Batches(data, items, resolution, norm, threads, job, [&](const float* pixels, std::size_t n, int* classes) {
        engine.predict(pixels, static_cast<int>(n), threads, classes);
    });
    if (note) {
        if (!engine.refused().empty()) *note = engine.refused() + "; Int8Forward ran every image";
        else if (engine.imagesOnLoops()) *note = std::to_string(engine.imagesOnLoops()) + " images ran on Int8Forward (float32's exact range)";
    }
    return r;
}

}  // namespace tinyscope
