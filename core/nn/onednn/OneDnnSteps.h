#pragma once
// What the oneDNN plans (OneDnnPlan.cpp, OneDnnCalibration.cpp) build from: a list of steps — oneDNN
// primitives with their arguments, or our kernels — run one after the other on one scratchpad, and
// the layers they share (a conv with its kernel cropped to the taps that meet data, global pooling,
// inner products, the SE multiply). Internal to nn/onednn (.cpp files only; includes dnnl).
#include "nn/onednn/FoldedSubnet.h"
#include "nn/onednn/OneDnnCommon.h"
#include "nn/onednn/OneDnnPlan.h"   // OneDnnRefused

#include <dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tinyscope::onednn {

struct Steps {
    using memory = dnnl::memory;
    using Tag = memory::format_tag;
    using Dt = memory::data_type;
    using algorithm = dnnl::algorithm;
    using prop_kind = dnnl::prop_kind;

    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{eng};
    int n = 0;              // images the primitives take
    Dt actType = Dt::f32;   // activations and weights (bf16: the convs' and inner products' inputs); bias, logits f32

    // A oneDNN primitive with its arguments, or one of our kernels (`own`, run on the scratchpad).
    struct Step {
        dnnl::primitive prim;
        std::unordered_map<int, memory> args;
        memory::desc scratchpad;
        std::function<void(float* scratch)> own;
    };
    std::vector<Step> steps;
    std::size_t scratchBytes = 0;
    std::unique_ptr<Buffer> scratch;

    memory::desc nhwc(int c, int h) const { return memory::desc({n, c, h, h}, actType, Tag::nhwc); }

    memory owned(const memory::desc& d, const void* data)
    {
        memory m(d, eng);
        std::memcpy(m.get_data_handle(), data, d.get_size());
        return m;
    }

    // Reorders user weights (given layout) into the layout the primitive chose.
    memory weights(const memory::desc& user, const void* data, const memory::desc& chosen)
    {
        memory src(user, eng, const_cast<void*>(data));
        memory dst(chosen, eng);
        dnnl::reorder(src, dst).execute(stream, src, dst);
        stream.wait();
        return dst;
    }

    // One of our kernels as a step (run on the plan's scratch, which it needs `scratchFloats` of).
    void addOwn(std::function<void(float* scratch)> f, std::size_t scratchFloats = 0)
    {
        scratchBytes = std::max(scratchBytes, scratchFloats * sizeof(float));
        Step s;
        s.own = std::move(f);
        steps.push_back(std::move(s));
    }

    template <class Primitive>
    void add(const typename Primitive::primitive_desc& pd, std::unordered_map<int, memory> args)
    {
        scratchBytes = std::max(scratchBytes, pd.scratchpad_desc().get_size());
        steps.push_back({Primitive(pd), std::move(args), pd.scratchpad_desc(), {}});
    }

    static dnnl::primitive_attr attrWith(const dnnl::post_ops& po)
    {
        dnnl::primitive_attr a;
        a.set_post_ops(po);
        a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        return a;
    }

    static dnnl::post_ops relu6()
    {
        dnnl::post_ops po;
        po.append_eltwise(1.f, algorithm::eltwise_clip, 0.f, 6.f);
        return po;
    }

    // The kernel cropped to the taps that meet data on an h × h map (kernelWindow, SubnetLayout.h,
    // or oneDnnWindow for oneDNN's convs): c's weights, or the cropped copy in `cropped`.
    static const float* croppedWeights(const FoldedConv& c, const KernelWindow& win, std::vector<float>& cropped)
    {
        if (!win.cropped(c.kernel)) return c.weight.data();
        cropped = onednn::croppedKernel(c.weight.data(), static_cast<std::size_t>(c.cout) * (c.cin / c.groups), c.kernel, win);
        return cropped.data();
    }

    // conv + bias (+ post-ops) from src (c.cin × h × h, NHWC) into dst; returns the output size.
    int conv(const FoldedConv& c, int h, float* src, float* dst, const dnnl::post_ops& po)
    {
        const int ho = (h - 1) / c.stride + 1;
        const KernelWindow win = onednn::oneDnnWindow(c.kernel, c.stride, h);
        const int k = win.size, pad = win.pad;
        std::vector<float> cropped;
        const float* w = croppedWeights(c, win, cropped);
        memory::dims wdims = c.groups == 1 ? memory::dims{c.cout, c.cin, k, k}
                                           : memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups, k, k};
        const memory::desc wUser(wdims, Dt::f32, c.groups == 1 ? Tag::oihw : Tag::goihw);
        const memory::desc wAny(wdims, actType, Tag::any);
        const memory::desc bias({c.cout}, Dt::f32, Tag::x);
        const int all = n * h * h;   // the batch's pixels, when the conv is one matrix product over them
        const bool flat = onednn::batchAsPixels(k, k, pad, pad, pad, pad, c.stride, c.stride, h, h);
        const memory::desc s = flat ? memory::desc({1, c.cin, all, 1}, actType, Tag::nhwc) : nhwc(c.cin, h),
                           d = flat ? memory::desc({1, c.cout, all, 1}, actType, Tag::nhwc) : nhwc(c.cout, ho);
        const int stride = flat ? 1 : c.stride;
        dnnl::convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct, s, wAny, bias, d,
                                             {stride, stride}, {pad, pad}, {pad, pad});
        dnnl::convolution_forward::primitive_desc pd(desc, attrWith(po), eng);
        add<dnnl::convolution_forward>(pd, {{DNNL_ARG_SRC, memory(s, eng, src)},
                 {DNNL_ARG_WEIGHTS, weights(wUser, w, pd.weights_desc())},
                 {DNNL_ARG_BIAS, owned(bias, c.bias.data())},
                 {DNNL_ARG_DST, memory(d, eng, dst)}});
        return ho;
    }

    // Global average pooling of c × h × h (NHWC) into c values per image.
    void globalPool(int c, int h, float* src, float* dst)
    {
        const memory::desc s = nhwc(c, h), d = nhwc(c, 1);
        dnnl::pooling_forward::desc desc(prop_kind::forward_inference, algorithm::pooling_avg_exclude_padding, s, d, {1, 1},
                                         {h, h}, {0, 0}, {0, 0});
        dnnl::pooling_forward::primitive_desc pd(desc, attrWith({}), eng);
        add<dnnl::pooling_forward>(pd, {{DNNL_ARG_SRC, memory(s, eng, src)}, {DNNL_ARG_DST, memory(d, eng, dst)}});
    }

    // y = x Wᵀ + b on n × in values (row-major), W out × in.
    void innerProduct(int in, int out, const std::vector<float>& w, const std::vector<float>& b, float* src, float* dst,
                      const dnnl::post_ops& po, Dt dstType)
    {
        const memory::desc s({n, in}, actType, Tag::nc), d({n, out}, dstType, Tag::nc);
        const memory::desc wUser({out, in}, Dt::f32, Tag::oi), wAny({out, in}, actType, Tag::any);
        const memory::desc bias({out}, Dt::f32, Tag::x);
        dnnl::inner_product_forward::desc desc(prop_kind::forward_inference, s, wAny, bias, d);
        dnnl::inner_product_forward::primitive_desc pd(desc, attrWith(po), eng);
        add<dnnl::inner_product_forward>(pd, {{DNNL_ARG_SRC, memory(s, eng, src)},
                 {DNNL_ARG_WEIGHTS, weights(wUser, w.data(), pd.weights_desc())},
                 {DNNL_ARG_BIAS, owned(bias, b.data())},
                 {DNNL_ARG_DST, memory(d, eng, dst)}});
    }

    // x *= gate, the gate broadcast over the map (c × h × h NHWC, gate n × c).
    void scale(int c, int h, float* x, float* gate)
    {
        const memory::desc s = nhwc(c, h), g = nhwc(c, 1);
        dnnl::binary::desc desc(algorithm::binary_mul, s, g, s);
        dnnl::binary::primitive_desc pd(desc, attrWith({}), eng);
        memory xm(s, eng, x);
        add<dnnl::binary>(pd, {{DNNL_ARG_SRC_0, xm}, {DNNL_ARG_SRC_1, memory(g, eng, gate)}, {DNNL_ARG_DST, xm}});
    }

    // Runs f() building `where`'s primitives: oneDNN's refusal (or TINYSCOPE_ONEDNN_REFUSE=LAYER,
    // e.g. blocks.1.depth_conv, a refusal on demand so that the fallbacks can be exercised; no
    // shipped subnet is refused) becomes OneDnnRefused naming the layer and the batch.
    template <class F>
    void layer(const std::string& where, F&& f)
    {
        const char* refuse = std::getenv("TINYSCOPE_ONEDNN_REFUSE");
        if (refuse && where == refuse)
            throw OneDnnRefused("oneDNN refused " + where + " (batch " + std::to_string(n) + "): TINYSCOPE_ONEDNN_REFUSE names it");
        try {
            f();
        } catch (const dnnl::error& e) {
            throw OneDnnRefused("oneDNN refused " + where + " (batch " + std::to_string(n) + "): " + e.what());
        }
    }

    // The SE block of `b` on its depthwise output `map` (mid × h × h): the channel means into `pool`
    // (unless `poolMap` is false: something else summed them there), the reduce layer + ReLU6 into
    // `hidden`, the expand layer + h-sigmoid into `gate` (n × mid), and the map × its gate (unless
    // `scaleMap` is false: a later kernel folds the gate in).
    void squeezeExcite(const FoldedBlock& b, int h, float* map, float* pool, float* hidden, float* gate, bool poolMap, bool scaleMap)
    {
        const int mid = b.dw.cout, seMidC = static_cast<int>(b.se_reduce_b.size());
        if (poolMap) globalPool(mid, h, map, pool);
        innerProduct(mid, seMidC, b.se_reduce_w, b.se_reduce_b, pool, hidden, relu6(), actType);
        // h-sigmoid: relu6(x + 3) / 6 = clip(x, -3, 3) / 6 + 1/2.
        dnnl::post_ops hsig;
        hsig.append_eltwise(1.f, algorithm::eltwise_clip, -3.f, 3.f);
        hsig.append_eltwise(1.f, algorithm::eltwise_linear, 1.f / 6.f, 0.5f);
        innerProduct(seMidC, mid, b.se_expand_w, b.se_expand_b, hidden, gate, hsig, actType);
        if (scaleMap) scale(mid, h, map, gate);
    }

    // After the last step: one scratchpad for all primitives and our kernels (they run one after the other).
    void bindScratchpad()
    {
        scratch = std::make_unique<Buffer>((scratchBytes + sizeof(float) - 1) / sizeof(float));
        for (Step& s : steps)
            if (!s.own && s.scratchpad.get_size() > 0) s.args.emplace(DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, eng, scratch->data));
    }

    // Steps [from, to) (no wait for the stream).
    void runSteps(std::size_t from, std::size_t to)
    {
        for (std::size_t i = from; i < to; ++i) {
            Step& s = steps[i];
            if (s.own)
                s.own(scratch->data);
            else
                s.prim.execute(stream, s.args);
        }
    }
};

}  // namespace tinyscope::onednn
