#include "nn/onednn/OneDnnInt8Plan.h"

#include "Error.h"
#include "nn/ShardPool.h"
#include "nn/onednn/DepthwiseConv.h"
#include "nn/onednn/Int8PlanPasses.h"
#include "nn/onednn/Int8StemConv.h"
#include "nn/onednn/OneDnnCommon.h"
#include "nn/OneDnnInfo.h"
#include "space/SubnetLayout.h"

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace tinyscope {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using onednn::Buffer;

using onednn::kFloatExact;
using int8pass::RequantArgs;

}  // namespace

struct OneDnnInt8Plan::Impl {
    const Int8Forward& f;
    int n = 0;
    bool u8 = false;                   // storage: uint8 (int8 + 128) and oneDNN's u8 × s8 → s32 convs; else float
    Int8Arithmetic arith = Int8Arithmetic::Exact;
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{eng};

    struct Dims {
        int C = 0, H = 1, W = 1;
        std::size_t per() const { return static_cast<std::size_t>(C) * H * W; }
    };
    std::map<int, Dims> dims;          // per value slot, one image
    std::map<int, int> bufferOf;       // value slot -> buffers index
    // Every slot holds its int8 values minus a shift. Float storage: the zero point of the convs
    // that read it, so such a conv reads x − zx (zero-padded) straight from the slot. uint8
    // storage: −128 everywhere (x + 128 in 0..255).
    std::map<int, std::int32_t> shift;
    std::int32_t shiftOf(int slot) const
    {
        if (u8) return -128;
        const auto it = shift.find(slot);
        return it == shift.end() ? 0 : it->second;
    }
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::unique_ptr<Buffer> shifted, acc, scratch;
    std::vector<float> gateTerms;      // the add / multiply passes' repeated gate terms (int8pass::repeatPeriod of the widest)
    std::size_t cap = 0;               // values per activation buffer
    bool keep = false, checkAll = false;
    bool fuse = true;                  // OneDnnInt8Expansion::FusedIntoDepthwise

    struct Conv {
        std::optional<dnnl::convolution_forward> prim;
        memory src, dst, weights, scratchpad;
        std::unordered_map<int, memory> args;   // built once; src's handle is set per run (memories are shared handles)
        double sumAbsW = 0;            // largest Σ|w| of one output channel
        bool direct = false;           // float storage: reads its input slot as is (shifted by zx, sums exact)
        // (shift − zx) times the Σ of the weights over the taps that meet the image, per output
        // position and channel (HO·WO × O): the conv of stored values sums w · (x − shift) over those
        // taps only, so Σ w · (x − zx) = conv + comp. Empty when not needed.
        std::vector<std::int32_t> comp;
        bool compPerPosition = false;  // else O values: no padding, every tap meets the image
        // A depthwise conv our kernel sums (DepthwiseConv.h; no oneDNN primitive then).
        std::shared_ptr<onednn::DepthwiseConv> own;
        // A conv of a few input channels (the stem) on our VNNI kernel (Int8StemConv.h, uint8
        // storage): its input bordered with the zero point, so one compensation per channel.
        std::shared_ptr<onednn::Int8StemConv> stem;
        std::vector<float> bias;       // exact arithmetic
        std::vector<std::uint32_t> biasBits;   // TinyEngine / TFLite (the int32 bias's bits)
        // bias, scale and a per-channel comp repeated over lcm(O, 64) values (RequantArgs), 64-byte aligned.
        std::shared_ptr<Buffer> biasRep, scaleRep, compRep;
        std::size_t period = 0;
        // A depthwise conv with its expansion fused (`own` runs both, fuseExpansions): the slot
        // of the expansion's input, which it reads instead of its own input; −1 if none.
        int expandsFrom = -1;
        std::string where;             // for oneDNN's refusal, when its primitive is built (makePrimitive)
    };
    struct Op {
        const Int8Step* step = nullptr;
        int conv = -1;                 // index into convs (a conv fused with its truncation)
        int out = -1;                  // the slot written (for a conv: its truncation's output)
        std::vector<int> in;           // the slots read: the step's inputs, or a fused expansion's
    };
    std::vector<Conv> convs;
    std::vector<Op> ops;
    int input = -1, logits = -1, classes = 0;

    template <typename T>
    T* at(int slot) const
    {
        return reinterpret_cast<T*>(buffers[static_cast<std::size_t>(bufferOf.at(slot))]->data);
    }
    void* raw(int slot) const { return buffers[static_cast<std::size_t>(bufferOf.at(slot))]->data; }
    std::size_t bufferFloats() const { return u8 ? (cap + 3) / 4 : cap; }

    Impl(const Int8Forward& forward, bool uint8) : f(forward), u8(uint8) {}

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
        // Readers of every slot, to fuse each conv, add and multiply with its truncation.
        std::map<int, std::vector<std::size_t>> readers;
        for (std::size_t i = 0; i < steps.size(); ++i)
            for (int in : steps[i].in) readers[in].push_back(i);
        std::size_t most = dimsOf(input).per();
        dims[input] = dimsOf(input);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const Int8Step& s = steps[i];
            const std::string where = "op " + std::to_string(i) + " (" + f.graph().tensor(s.out).name + ")";
            most = std::max(most, dimsOf(s.out).per());
            if (s.kind == OpKind::McuTruncate) continue;   // fused into the op it reads
            for (int in : s.in)
                if (!dims.count(in)) throw OneDnnRefused("int8 plan: " + where + " reads a tensor no op before it wrote");
            Op op;
            op.step = &s;
            op.out = s.out;
            op.in = s.in;
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
                throw OneDnnRefused("int8 plan: a truncation without its op (" + f.graph().tensor(s.out).name + ")");
        if (!dims.count(logits)) throw OneDnnRefused("int8 plan: the logits are not an op's output");
        if (!u8) {
            // Float shifts: a slot read by convs of one zero point is stored minus it. Every slot
            // holds clamped int8 values (the input, truncations, means of them), so |x − zx| is at
            // most max(127 − zx, zx + 128) and a conv whose Σ|w| keeps that below 2^24 needs no check.
            std::map<int, std::vector<std::int32_t>> zeroPoints;
            for (const Op& op : ops)
                if (op.conv >= 0) zeroPoints[op.step->in[0]].push_back(op.step->zx);
            for (auto& [slot, zs] : zeroPoints)
                if (std::all_of(zs.begin(), zs.end(), [&](std::int32_t z) { return z == zs.front(); })) shift[slot] = zs.front();
        }
        if (fuse && u8 && arith == Int8Arithmetic::Exact && int8pass::avx512() && onednn::DepthwiseConv::int8ExpansionAvailable()) fuseExpansions(readers);
        // oneDNN primitives for the convs that still run (a fused expansion needs none).
        for (const Op& op : ops)
            if (op.conv >= 0 && !convs[static_cast<std::size_t>(op.conv)].own && !convs[static_cast<std::size_t>(op.conv)].stem)
                makePrimitive(convs[static_cast<std::size_t>(op.conv)], *op.step);
        for (const Op& op : ops) {
            if (op.conv < 0) continue;
            const Int8Step& s = *op.step;
            Conv& c = convs[static_cast<std::size_t>(op.conv)];
            const double bound = std::max(127 - s.zx, s.zx + 128);
            c.direct = !u8 && shiftOf(s.in[0]) == s.zx && bound * c.sumAbsW < kFloatExact;
            if (u8 && c.expandsFrom < 0 && shiftOf(s.in[0]) != s.zx) {
                c.compPerPosition = !c.stem && (s.pt || s.pl || s.pb || s.pr);
                c.comp = compensation(s, c.compPerPosition, shiftOf(s.in[0]) - s.zx, c.stem != nullptr);
            }
            if (int8pass::vectorised() && arith == Int8Arithmetic::Exact) repeatChannelValues(s, c);
            // The exact arithmetic: our stem kernel requantises as it stores (no int32 map).
            if (c.stem && arith == Int8Arithmetic::Exact) c.stem->setRequant(c.comp.empty() ? nullptr : c.comp.data(), c.bias.data(), s.scale.data(), s.zy);
        }
        for (const Op& op : ops)
            if (op.step->kind == OpKind::McuAdd || op.step->kind == OpKind::McuMultiply)
                gateTerms.resize(std::max(gateTerms.size(), int8pass::repeatPeriod(static_cast<std::size_t>(dims.at(op.out).C))));
        cap = most * static_cast<std::size_t>(n);
        if (!u8) shifted = std::make_unique<Buffer>(cap);
        acc = std::make_unique<Buffer>(cap);   // float32 or int32 sums
        std::size_t scratchBytes = 0;
        for (const Conv& c : convs)
            scratchBytes = std::max(scratchBytes, c.own    ? c.own->scratchFloats() * sizeof(float)
                                                  : c.stem ? c.stem->scratchBytes()
                                                  : c.prim ? c.scratchpad.get_desc().get_size()
                                                           : 0);
        scratch = std::make_unique<Buffer>((scratchBytes + sizeof(float) - 1) / sizeof(float));
        for (Conv& c : convs) {
            if (!c.prim) continue;
            c.src = memory(c.src.get_desc(), eng, nullptr);
            c.dst = memory(c.dst.get_desc(), eng, acc->data);
            c.scratchpad = memory(c.scratchpad.get_desc(), eng, scratch->data);
            c.args = {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, c.dst}, {DNNL_ARG_SCRATCHPAD, c.scratchpad}};
        }
        assignBuffers();
    }

    // Each depthwise conv our kernel sums whose input is a 1×1 conv's (one group, stride 1, no
    // padding) read by nothing else: the two run as one (DepthwiseConv::runExpanded on uint8), the
    // expansion's requantised output computed into the depthwise kernel's tiles as y − zdw and never
    // stored, so the depthwise sums need no compensation either. Uint8 storage and the exact
    // arithmetic only (docs/ONEDNN.md, "The int8 expansion fused").
    void fuseExpansions(const std::map<int, std::vector<std::size_t>>& readers)
    {
        std::map<int, std::size_t> writer;   // slot -> the op writing it
        for (std::size_t i = 0; i < ops.size(); ++i) writer[ops[i].out] = i;
        std::vector<bool> fused(ops.size(), false);
        for (Op& d : ops) {
            if (d.conv < 0 || !convs[static_cast<std::size_t>(d.conv)].own) continue;
            const Int8Step& s = *d.step;
            const int mid = s.in[0];
            const auto w = writer.find(mid);
            if (w == writer.end() || ops[w->second].conv < 0 || mid == logits || readers.at(mid).size() != 1) continue;
            const Int8Step& e = *ops[w->second].step;
            if (e.KH != 1 || e.KW != 1 || e.groups != 1 || e.sh != 1 || e.sw != 1 || e.pt || e.pl || e.pb || e.pr || e.O != s.C || e.HO != s.H ||
                e.WO != s.W)
                continue;
            const std::vector<std::int32_t> comp = compensation(e, false, shiftOf(e.in[0]) - e.zx);
            const Conv& ec = convs[static_cast<std::size_t>(ops[w->second].conv)];
            const onednn::Int8Expansion x{e.C, e.weight.data(), comp.data(), ec.bias.data(), e.scale.data(), e.zy, s.zx};
            if (!onednn::DepthwiseConv::int8ExpansionFitsInt32(s.C, x)) continue;
            const std::vector<float> wf(s.weight.begin(), s.weight.end());
            Conv& c = convs[static_cast<std::size_t>(d.conv)];
            try {
                c.own = std::make_shared<onednn::DepthwiseConv>(s.C, s.H, s.KH, s.sh, s.pt, wf.data(), x);
            } catch (const std::invalid_argument&) {   // an expansion weight outside int8: its own conv refuses it
                continue;
            }
            c.expandsFrom = e.in[0];
            d.in = e.in;
            fused[w->second] = true;
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < ops.size(); ++i)
            if (!fused[i]) ops[kept++] = ops[i];
        ops.resize(kept);
    }

    // The AVX-512 / AVX2 exact requantisation's per-channel values over lcm(O, 64) (RequantArgs).
    static void repeatChannelValues(const Int8Step& s, Conv& c)
    {
        const std::size_t O = static_cast<std::size_t>(s.O);
        c.period = int8pass::repeatPeriod(O);
        c.biasRep = std::make_shared<Buffer>(c.period);
        c.scaleRep = std::make_shared<Buffer>(c.period);
        if (!c.comp.empty() && !c.compPerPosition) c.compRep = std::make_shared<Buffer>(c.period);
        for (std::size_t i = 0; i < c.period; ++i) {
            c.biasRep->data[i] = c.bias[i % O];
            c.scaleRep->data[i] = s.scale[i % O];
            if (c.compRep) reinterpret_cast<std::int32_t*>(c.compRep->data)[i] = c.comp[i % O];
        }
    }

    // `factor` · Σ w over the taps of output (oy, ox) that meet the image, for every output channel;
    // without padding every tap meets it everywhere, so position (0, 0) alone. `everyTap`: Σ w over
    // all taps, one per channel (our stem kernel's input is bordered, so every tap meets a value).
    static std::vector<std::int32_t> compensation(const Int8Step& s, bool perPosition, std::int32_t factor, bool everyTap = false)
    {
        if (everyTap) {
            const std::size_t per = static_cast<std::size_t>(s.C / s.groups) * s.KH * s.KW;
            std::vector<std::int32_t> comp(static_cast<std::size_t>(s.O), 0);
            for (std::size_t o = 0; o < comp.size(); ++o)
                comp[o] = factor * std::accumulate(s.weight.begin() + static_cast<std::ptrdiff_t>(o * per),
                                                   s.weight.begin() + static_cast<std::ptrdiff_t>((o + 1) * per), std::int32_t{0});
            return comp;
        }
        const int HO = perPosition ? s.HO : 1, WO = perPosition ? s.WO : 1;
        const int Cg = s.C / s.groups, K = s.KH * s.KW;
        std::vector<std::int32_t> tapSum(static_cast<std::size_t>(s.O) * K, 0);   // Σ over the group's channels, per tap
        for (int o = 0; o < s.O; ++o)
            for (int c = 0; c < Cg; ++c)
                for (int k = 0; k < K; ++k)
                    tapSum[static_cast<std::size_t>(o) * K + k] += s.weight[(static_cast<std::size_t>(o) * Cg + c) * K + k];
        std::vector<std::int32_t> comp(static_cast<std::size_t>(HO) * WO * s.O, 0);
        for (int oy = 0; oy < HO; ++oy)
            for (int ox = 0; ox < WO; ++ox)
                for (int ky = 0; ky < s.KH; ++ky) {
                    const int iy = oy * s.sh - s.pt + ky;
                    if (iy < 0 || iy >= s.H) continue;
                    for (int kx = 0; kx < s.KW; ++kx) {
                        const int ix = ox * s.sw - s.pl + kx;
                        if (ix < 0 || ix >= s.W) continue;
                        std::int32_t* row = &comp[(static_cast<std::size_t>(oy) * WO + ox) * s.O];
                        for (int o = 0; o < s.O; ++o) row[o] += tapSum[static_cast<std::size_t>(o) * K + ky * s.KW + kx];
                    }
                }
        for (std::int32_t& v : comp) v *= factor;
        return comp;
    }

    // Buffers by liveness: an op's output takes a free buffer; an input is freed after its last reader.
    void assignBuffers()
    {
        std::map<int, std::size_t> last;
        for (std::size_t i = 0; i < ops.size(); ++i)
            for (int in : ops[i].in) last[in] = i;
        std::vector<int> free;
        auto take = [&](int slot) {
            if (free.empty() || keep) {
                buffers.push_back(std::make_unique<Buffer>(bufferFloats()));
                bufferOf[slot] = static_cast<int>(buffers.size()) - 1;
            } else {
                bufferOf[slot] = free.back();
                free.pop_back();
            }
        };
        take(input);
        for (std::size_t i = 0; i < ops.size(); ++i) {
            take(ops[i].out);
            for (int in : ops[i].in)
                if (last[in] == i && in != logits) free.push_back(bufferOf.at(in));
        }
    }

    Conv makeConv(const Int8Step& s, const std::string& where)
    {
        Conv c;
        const int Cg = s.C / s.groups, per = Cg * s.KH * s.KW;
        c.sumAbsW = onednn::largestChannelAbsSum(s.weight, s.O, per);
        for (std::int32_t b : s.bias) {
            c.bias.push_back(static_cast<float>(b));
            c.biasBits.push_back(static_cast<std::uint32_t>(b));
        }
        // Depthwise with square, symmetric padding: our kernel (uint8 → int32 or float → float
        // sums). Its float32 partial sums are integers below 255 · Σ|w| (uint8) or the plan's own
        // 2^24 check (float), so exact like oneDNN's.
        const bool depthwise = s.groups == s.C && s.C == s.O && s.KH == s.KW && s.sh == s.sw && s.H == s.W && s.HO == s.WO &&
                               s.pt == s.pl && s.pt == s.pb && s.pt == s.pr;
        if (depthwise && onednn::DepthwiseConv::available() && onednn::DepthwiseConv::supports(s.KH, s.sh) &&
            (!u8 || 255.0 * c.sumAbsW < kFloatExact)) {
            const std::vector<float> wf(s.weight.begin(), s.weight.end());
            auto dw = std::make_shared<onednn::DepthwiseConv>(s.C, s.H, s.KH, s.sh, s.pt, wf.data(), nullptr, false);
            if (dw->outputSize() == s.HO) {
                c.own = std::move(dw);
                return c;
            }
        }
        // A conv of a few input channels (the stem), uint8 storage: our VNNI kernel, its input
        // bordered with the zero point's stored value (zx + 128).
        if (u8 && s.groups == 1 && s.KH == s.KW && s.sh == s.sw && s.H == s.W && s.HO == s.WO && s.pt == s.pl && s.pt == s.pb && s.pt == s.pr &&
            s.zx >= -128 && s.zx <= 127 && onednn::Int8StemConv::available() && onednn::Int8StemConv::supports(s.C, s.O, s.KH, s.sh)) {
            try {
                auto stem = std::make_shared<onednn::Int8StemConv>(s.C, s.O, s.H, s.KH, s.sh, s.pt, s.weight.data(), static_cast<std::uint8_t>(s.zx + 128));
                if (stem->outputSize() == s.HO) {
                    c.stem = std::move(stem);
                    return c;
                }
            } catch (const std::invalid_argument&) {   // a weight outside int8: oneDNN's conv refuses it by name
            }
        }
        c.where = where;
        return c;
    }

    // The oneDNN convolution of a conv our kernels do not run, its weights reordered once.
    void makePrimitive(Conv& c, const Int8Step& s)
    {
        const std::string& where = c.where;
        const int Cg = s.C / s.groups;
        // A square conv (padding k/2) on a map so small that its outer taps meet only the padding
        // (7×7 depthwise convs on 1×1–3×3 maps): the kernel cropped to the taps that meet data, as
        // the fp32 plan crops it (oneDnnWindow) — the same sums, and no compensation changes (it
        // counts taps that meet the image) — where oneDNN would otherwise run the full kernel
        // through its slow im2col GEMM path (x64:gemm:jit, 5.7 ms for a 2×2 map of 1,152 channels
        // and 8 images under AVX2).
        const bool square = s.KH == s.KW && s.sh == s.sw && s.H == s.W && s.pt == s.KH / 2 && s.pl == s.pt && s.pb == s.pt && s.pr == s.pt;
        const KernelWindow win = square ? onednn::oneDnnWindow(s.KH, s.sh, s.H) : KernelWindow{s.KH, 0, s.pt};
        const bool crop = square && win.cropped(s.KH);
        const int KH = crop ? win.size : s.KH, KW = crop ? win.size : s.KW;
        const int pt = crop ? win.pad : s.pt, pl = crop ? win.pad : s.pl, pb = crop ? win.pad : s.pb, pr = crop ? win.pad : s.pr;
        const std::vector<std::int32_t> weights =
            crop ? onednn::croppedKernel(s.weight.data(), static_cast<std::size_t>(s.O) * Cg, s.KH, win) : std::vector<std::int32_t>{};
        const std::vector<std::int32_t>& weight = crop ? weights : s.weight;
        try {
            const Dt act = u8 ? Dt::u8 : Dt::f32, wt = u8 ? Dt::s8 : Dt::f32, sums = u8 ? Dt::s32 : Dt::f32;
            std::vector<float> wf;
            std::vector<std::int8_t> w8;
            if (u8) {
                for (std::int32_t w : weight) {
                    if (w < -128 || w > 127) throw OneDnnRefused("int8 plan: " + where + " has a weight outside int8: " + std::to_string(w));
                    w8.push_back(static_cast<std::int8_t>(w));
                }
            } else {
                wf.assign(weight.begin(), weight.end());
            }
            const memory::dims wdims = s.groups == 1 ? memory::dims{s.O, s.C, KH, KW} : memory::dims{s.groups, s.O / s.groups, Cg, KH, KW};
            const memory::desc wUser(wdims, wt, s.groups == 1 ? Tag::oihw : Tag::goihw), wAny(wdims, wt, Tag::any);
            // One matrix product over the batch's pixels where it is one (OneDnnCommon.h).
            const bool flat = onednn::batchAsPixels(KH, KW, pt, pl, pb, pr, s.sh, s.sw, s.H, s.W);
            const memory::dims srcDims = flat ? memory::dims{1, s.C, n * s.H * s.W, 1} : memory::dims{n, s.C, s.H, s.W};
            const memory::dims dstDims = flat ? memory::dims{1, s.O, n * s.HO * s.WO, 1} : memory::dims{n, s.O, s.HO, s.WO};
            const memory::desc src(srcDims, act, Tag::nhwc), dst(dstDims, sums, Tag::nhwc);
            dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wAny, dst,
                                              flat ? memory::dims{1, 1} : memory::dims{s.sh, s.sw}, {pt, pl}, {pb, pr});
            dnnl::primitive_attr attr;
            attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
            dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
            memory user(wUser, eng, u8 ? static_cast<void*>(w8.data()) : static_cast<void*>(wf.data()));
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
    }

    template <typename T>
    void quantizeInput(const float* images)
    {
        const Dims d = dims.at(input);
        const std::size_t hw = static_cast<std::size_t>(d.H) * d.W;
        const float inv = static_cast<float>(1.0 / f.inputScale());
        const std::int32_t zero = f.inputZero(), sh = shiftOf(input);
        T* out = at<T>(input);
        int8pass::quantizeInput(images, n, d.C, hw, inv, zero, sh, out);
    }

    bool conv(const Op& op)
    {
        const Int8Step& s = *op.step;
        Conv& c = convs[static_cast<std::size_t>(op.conv)];
        if (c.expandsFrom >= 0) {
            c.own->runExpanded(at<std::uint8_t>(c.expandsFrom), reinterpret_cast<std::int32_t*>(acc->data), n, scratch->data);
            return requantize(op, c);
        }
        void* src = raw(s.in[0]);
        if (!u8 && !(c.direct && !checkAll)) {   // another shift, or sums that might leave float32's exact range: shift a copy and check
            const std::size_t inCount = dims.at(s.in[0]).per() * n;
            const float most = int8pass::shiftAndMax(at<float>(s.in[0]), inCount, static_cast<float>(s.zx - shiftOf(s.in[0])), shifted->data);
            if (static_cast<double>(most) * c.sumAbsW >= kFloatExact) return false;   // a partial sum might not be exact
            src = shifted->data;
        }
        if (c.stem) {
            auto* tile = reinterpret_cast<std::uint8_t*>(scratch->data);
            if (arith == Int8Arithmetic::Exact) {   // requantised as it stores (setRequant)
                c.stem->run(static_cast<const std::uint8_t*>(src), at<std::uint8_t>(op.out), n, tile);
                return true;
            }
            c.stem->run(static_cast<const std::uint8_t*>(src), reinterpret_cast<std::int32_t*>(acc->data), n, tile);
        } else if (c.own) {
            if (u8) c.own->run(static_cast<const std::uint8_t*>(src), reinterpret_cast<std::int32_t*>(acc->data), n, scratch->data);
            else c.own->run(static_cast<const float*>(src), acc->data, n, scratch->data);
        } else {
            c.src.set_data_handle(src);
            c.prim->execute(stream, c.args);
            stream.wait();
        }
        return requantize(op, c);
    }

    // The conv's sums (in acc) requantised, clamped and stored in its truncation's slot.
    bool requantize(const Op& op, const Conv& c)
    {
        const Int8Step& s = *op.step;
        RequantArgs r{c.comp.empty() ? nullptr : c.comp.data(),
                      c.compPerPosition ? static_cast<std::size_t>(s.O) : 0,
                      static_cast<std::size_t>(n),
                      static_cast<std::size_t>(s.HO) * s.WO,
                      s.O,
                      c.bias.data(),
                      c.biasBits.data(),
                      s.scale.data(),
                      s.mult.data(),
                      s.zy,
                      shiftOf(op.out)};
        if (c.period) {
            r.biasRep = c.biasRep->data;
            r.scaleRep = c.scaleRep->data;
            r.compRep = c.compRep ? reinterpret_cast<const std::int32_t*>(c.compRep->data) : nullptr;
            r.period = c.period;
        }
        if (u8) int8pass::requantize(reinterpret_cast<const std::int32_t*>(acc->data), r, arith, at<std::uint8_t>(op.out));
        else int8pass::requantize(acc->data, r, arith, at<float>(op.out));
        return true;
    }

    template <typename T>
    void mean(const Op& op)
    {
        const Int8Step& s = *op.step;
        const Dims d = dims.at(s.in[0]);
        int8pass::mean(at<T>(s.in[0]), n, d.H * d.W, d.C, shiftOf(s.in[0]), shiftOf(op.out), arith != Int8Arithmetic::Exact, at<T>(op.out));
    }

    // Add or multiply, and the truncation that reads it.
    template <typename T>
    void addMul(const Op& op)
    {
        const Int8Step& s = *op.step;
        const Dims d = dims.at(op.out);
        // Operands are the output's shape or a per-channel gate broadcast over H, W.
        const bool aGate = shapeElems(s.shape1) != s.n, bGate = shapeElems(s.shape2) != s.n;
        const std::int32_t shifts[3] = {shiftOf(s.in[0]), shiftOf(s.in[1]), shiftOf(op.out)};
        int8pass::addMul(at<T>(s.in[0]), at<T>(s.in[1]), aGate, bGate, n, static_cast<std::size_t>(d.H) * d.W, static_cast<std::size_t>(d.C), arith, s,
                         shifts, gateTerms.data(), at<T>(op.out));
    }

    template <typename T>
    bool runAll(const float* images, std::int32_t* logitsOut)
    {
        quantizeInput<T>(images);
        for (const Op& op : ops) {
            if (op.conv >= 0) {
                if (!conv(op)) return false;
            } else if (op.step->kind == OpKind::McuMean) {
                mean<T>(op);
            } else {
                addMul<T>(op);
            }
        }
        const T* l = at<T>(logits);
        const std::size_t count = static_cast<std::size_t>(n) * classes;
        const std::int32_t sh = shiftOf(logits);
        for (std::size_t i = 0; i < count; ++i) logitsOut[i] = static_cast<std::int32_t>(l[i]) + sh;
        return true;
    }

    template <typename T>
    std::vector<std::int32_t> tensor(int id, int image) const
    {
        if (!bufferOf.count(id)) return {};   // a fused expansion's output
        const Dims d = dims.at(id);
        const std::size_t hw = static_cast<std::size_t>(d.H) * d.W;
        const T* x = at<T>(id) + static_cast<std::size_t>(image) * d.per();
        std::vector<std::int32_t> out(d.per());
        const std::int32_t sh = shiftOf(id);
        for (int c = 0; c < d.C; ++c)
            for (std::size_t q = 0; q < hw; ++q) out[static_cast<std::size_t>(c) * hw + q] = static_cast<std::int32_t>(x[q * d.C + c]) + sh;
        return out;
    }
};

OneDnnInt8Plan::OneDnnInt8Plan(const Int8Forward& forward, int batch, OneDnnInt8Storage storage, OneDnnInt8Expansion expansion)
    : impl_(std::make_unique<Impl>(forward, storage == OneDnnInt8Storage::Uint8 || (storage == OneDnnInt8Storage::Auto && oneDnnHasVnni())))
{
    if (batch < 1) throw OneDnnRefused("int8 plan: batch size must be at least 1, got " + std::to_string(batch));
    impl_->n = batch;
    impl_->fuse = expansion == OneDnnInt8Expansion::FusedIntoDepthwise;
    const onednn::OneThreadScope oneThread;   // single-threaded primitives (OneDnnCommon.h)
    impl_->build();
}

OneDnnInt8Plan::~OneDnnInt8Plan() = default;

int OneDnnInt8Plan::batch() const { return impl_->n; }
bool OneDnnInt8Plan::uint8Storage() const { return impl_->u8; }

std::size_t OneDnnInt8Plan::ownDepthwise() const
{
    return static_cast<std::size_t>(std::count_if(impl_->convs.begin(), impl_->convs.end(), [](const Impl::Conv& c) { return c.own != nullptr; }));
}

std::size_t OneDnnInt8Plan::ownStems() const
{
    return static_cast<std::size_t>(std::count_if(impl_->convs.begin(), impl_->convs.end(), [](const Impl::Conv& c) { return c.stem != nullptr; }));
}

std::size_t OneDnnInt8Plan::fusedExpansions() const
{
    return static_cast<std::size_t>(std::count_if(impl_->convs.begin(), impl_->convs.end(), [](const Impl::Conv& c) { return c.expandsFrom >= 0; }));
}

void OneDnnInt8Plan::keepAll(bool keep)
{
    Impl& p = *impl_;
    if (keep == p.keep) return;
    p.keep = keep;
    p.buffers.clear();
    p.bufferOf.clear();
    p.assignBuffers();
}

void OneDnnInt8Plan::checkEveryConv(bool check) { impl_->checkAll = check; }

bool OneDnnInt8Plan::run(const float* images, std::int32_t* logits)
{
    Impl& p = *impl_;
    const onednn::OneThreadScope oneThread;
    return p.u8 ? p.runAll<std::uint8_t>(images, logits) : p.runAll<float>(images, logits);
}

std::vector<std::int32_t> OneDnnInt8Plan::tensor(int id, int image) const
{
    const Impl& p = *impl_;
    if (!p.keep || !p.dims.count(id) || image < 0 || image >= p.n) return {};
    return p.u8 ? p.tensor<std::uint8_t>(id, image) : p.tensor<float>(id, image);
}

// ---- the engine ----

namespace {
// Images per plan run: as many as keep the largest activation within kRunValues values (1 MiB in
// uint8 storage, 4 MiB in float), 1 to kPlanBatch. Measured on machine A (2026-12-03, docs/ONEDNN.md
// "int8 runs"): the largest VWW subnet at 160 px (614 Ki values per image) ran 1.17× faster one
// image at a time than in runs of 8 (787 against 672 img/s, two threads); at 96 px (221 Ki) 2–8
// images were within 3 %; the smallest subnet within 5 % from 2 to 8.
constexpr int kPlanBatch = 8;
constexpr std::int64_t kRunValues = std::int64_t{1} << 20;

int runBatchOf(const Int8Forward& f)
{
    std::int64_t most = 1;
    for (const Tensor& t : f.graph().tensors)
        if (t.kind == TensorKind::Activation) most = std::max(most, t.elems());
    return static_cast<int>(std::clamp<std::int64_t>(kRunValues / most, 1, kPlanBatch));
}
using onednn::partSize;
int argmax(const std::int32_t* l, int n) { return static_cast<int>(std::max_element(l, l + n) - l); }
}  // namespace

OneDnnInt8Engine::OneDnnInt8Engine(const Int8Forward& forward, OneDnnInt8Storage storage, OneDnnInt8Expansion expansion)
    : forward_(forward), storage_(storage), expansion_(expansion), runBatch_(runBatchOf(forward))
{
    if (storage_ == OneDnnInt8Storage::Auto && !oneDnnHasVnni()) storage_ = OneDnnInt8Storage::Float;
}
OneDnnInt8Engine::~OneDnnInt8Engine() = default;

OneDnnInt8Plan& OneDnnInt8Engine::plan(int batch, int part)
{
    const auto key = std::make_pair(batch, part);
    auto it = plans_.find(key);
    if (it == plans_.end()) it = plans_.emplace(key, std::make_unique<OneDnnInt8Plan>(forward_, batch, storage_, expansion_)).first;
    return *it->second;
}

void OneDnnInt8Engine::chooseStorage(const float* images, int n)
{
    // One plan of each storage on the first (up to runBatch_) images: each run once to warm up, then both
    // timed in turns, three rounds, each storage's best kept (one timed run each was not enough:
    // on a subnet where the two are within 20 % the choice flipped between runs).
    using Clock = std::chrono::steady_clock;
    const int m = std::min(runBatch_, n);
    std::vector<std::int32_t> logits(static_cast<std::size_t>(m) * forward_.classes());
    std::unique_ptr<OneDnnInt8Plan> plans[2];
    const OneDnnInt8Storage kinds[2] = {OneDnnInt8Storage::Float, OneDnnInt8Storage::Uint8};
    double best[2] = {1e300, 1e300};
    std::string refusal;
    for (int i = 0; i < 2; ++i) {
        try {   // a storage oneDNN refuses (e.g. a weight outside int8 for uint8) leaves the other
            plans[i] = std::make_unique<OneDnnInt8Plan>(forward_, m, kinds[i], expansion_);
            plans[i]->run(images, logits.data());
        } catch (const OneDnnRefused& e) {
            refusal = e.what();
        }
    }
    for (int round = 0; round < 3; ++round)
        for (int i = 0; i < 2; ++i) {
            if (!plans[i]) continue;
            const auto t0 = Clock::now();
            plans[i]->run(images, logits.data());
            best[i] = std::min(best[i], std::chrono::duration<double>(Clock::now() - t0).count());
        }
    if (!plans[0] && !plans[1]) throw OneDnnRefused(refusal);
    const int pick = !plans[0] ? 1 : !plans[1] ? 0 : best[1] < best[0] ? 1 : 0;
    storage_ = kinds[pick];
    plans_[{m, 0}] = std::move(plans[pick]);   // the winner serves part 0
}

void OneDnnInt8Engine::prepareFor(int n, int parts)
{
    for (int p = 0; p < parts; ++p) {
        const int size = partSize(n, parts, p);
        plan(std::min(runBatch_, size), p);
        if (size > runBatch_ && size % runBatch_) plan(size % runBatch_, p);
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
            if (storage_ == OneDnnInt8Storage::Auto) chooseStorage(images, n);
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
        std::vector<std::int32_t> logits(static_cast<std::size_t>(runBatch_) * k);
        for (int at = first[p]; at < first[p + 1];) {
            const int m = std::min(runBatch_, first[p + 1] - at);
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
