#include "nn/onednn/OneDnnPlan.h"

#include "space/SubnetLayout.h"

#include "nn/onednn/DepthwiseConv.h"
#include "nn/onednn/OneDnnCommon.h"
#include "nn/onednn/OneDnnSteps.h"
#include "nn/onednn/PointwiseConv.h"
#include "nn/onednn/StemConv.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace tinyscope {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using Tag = memory::format_tag;
using Dt = memory::data_type;

using onednn::Buffer;

}  // namespace

struct OneDnnPlan::Impl : onednn::Steps {
    int resolution = 0, classes = 0;
    OneDnnDepthwise depthwise = OneDnnDepthwise::OursFused;
    std::size_t ownDepthwise = 0;   // depthwise convolutions run by our kernel
    std::size_t fusedExpansions = 0;   // of which with the block's expansion fused in
    OneDnnProjection projectionBy = OneDnnProjection::Ours;
    std::size_t ownProjections = 0;   // projections run by our PointwiseConv
    std::size_t fusedSeSteps = 0;     // SE pools summed by our depthwise kernel, SE multiplies folded into our projections
    bool ownStem = false;           // the first conv on our StemConv, reading the caller's NCHW images
    std::unique_ptr<Buffer> act[3], tailAct[3], sePool, seMid, seGate, pooled;
    // Two stages: steps [0, headSteps) run once per chunk of headBatch images, the rest once.
    int headBatch = 0;
    std::size_t headSteps = 0;
    int chunk = 0;   // the chunk the head is running (the junction's copy reads it)
    memory input, logits;   // user memories; handles set per run

    // The block's depthwise conv + bias + ReLU6: our kernel (DepthwiseConv.h) where the CPU has
    // AVX-512 and the kernel size has code, otherwise a oneDNN convolution. Returns the output size.
    // bf16 plans: bfloat16 activations in and out, the weights rounded to bfloat16 as oneDNN's
    // reorder rounds them for its bf16 convolutions; taps, sums and the bias in float32.
    int depthwiseConv(const FoldedConv& c, int h, float* src, float* dst, float* means)
    {
        if (!ownDepthwiseFor(c, h)) return conv(c, h, src, dst, relu6());
        return ourDepthwiseStep(c, h, src, dst, nullptr, means);
    }

    // Our depthwise kernel as a step, from src into dst (`ib`: the block's expansion fused in, src
    // then the block's input); returns the output size. bf16 plans: bfloat16 maps, and the weights
    // rounded to bfloat16 as oneDNN's reorder rounds them for its bf16 convs. `means` (or null):
    // each output channel's mean per image too (the SE block's pooling; bf16 plans: bfloat16 means).
    int ourDepthwiseStep(const FoldedConv& c, int h, float* src, float* dst, const FoldedConv* ib, float* means)
    {
        const KernelWindow win = kernelWindow(c.kernel, c.stride, h);
        std::vector<float> cropped;
        const float* w = croppedWeights(c, win, cropped);
        std::vector<float> dwWeights(w, w + static_cast<std::size_t>(c.cout) * win.size * win.size), ibWeights = ib ? ib->weight : std::vector<float>{};
        if (actType == Dt::bf16)
            for (std::vector<float>* v : {&dwWeights, &ibWeights})
                for (float& x : *v) x = roundedToBf16(x);
        const onednn::Expansion expansion{ib ? ib->cin : 0, ibWeights.data(), ib ? ib->bias.data() : nullptr};
        auto dw = std::make_shared<onednn::DepthwiseConv>(c.cout, h, win.size, c.stride, win.pad, dwWeights.data(), c.bias.data(), true,
                                                          ib ? &expansion : nullptr);
        if (dw->outputSize() != (h - 1) / c.stride + 1)   // not expected: kernelWindow keeps the output size
            throw OneDnnRefused("our depthwise kernel: output " + std::to_string(dw->outputSize()) + " px, the layer's " +
                                std::to_string((h - 1) / c.stride + 1));
        const bool fused = ib != nullptr;
        if (actType == Dt::bf16) {
            using onednn::Bf16;
            addOwn([dw, in = reinterpret_cast<const Bf16*>(src), out = reinterpret_cast<Bf16*>(dst), images = n, fused,
                    m = reinterpret_cast<Bf16*>(means)](float* scratch) {
                fused ? dw->runExpanded(in, out, images, scratch, m) : dw->run(in, out, images, scratch, m);
            }, dw->scratchFloats());
        } else {
            addOwn([dw, src, dst, images = n, fused, means](float* scratch) {
                fused ? dw->runExpanded(src, dst, images, scratch, means) : dw->run(src, dst, images, scratch, means);
            }, dw->scratchFloats());
        }
        ++ownDepthwise;
        fusedExpansions += fused;
        return dw->outputSize();
    }

    // Our kernel runs this depthwise conv (AVX-512, its kernel size and stride; not OneDnnDepthwise::OneDnn).
    bool ownDepthwiseFor(const FoldedConv& c, int h) const
    {
        return depthwise != OneDnnDepthwise::OneDnn && c.groups == c.cin && c.cin == c.cout && onednn::DepthwiseConv::available() &&
               onednn::DepthwiseConv::supports(kernelWindow(c.kernel, c.stride, h).size, c.stride);
    }

    // The block's expansion fused into our depthwise kernel (OursFused, a 1×1 stride-1 expansion; in
    // bf16 plans from an even channel count on a CPU with AVX-512 BF16). Measured faster than oneDNN's
    // expansion + our depthwise conv on every block of the VWW subnets measured (docs/ONEDNN.md "The
    // expansion fused into the depthwise kernel").
    bool fusesExpansion(const FoldedBlock& b, int h) const
    {
        if (actType == Dt::bf16 && (b.ib.cin % 2 != 0 || !onednn::DepthwiseConv::bf16ExpansionAvailable())) return false;
        // A 1-pixel map in a plan of several images: oneDNN's 1×1 conv over the batch's pixels (one
        // matrix product, onednn::batchAsPixels) and our depthwise kernel after it are faster than
        // our fused kernel, which computes one pixel per image (docs/ONEDNN.md, "Small maps").
        if (h == 1 && n > 1) return false;
        return depthwise == OneDnnDepthwise::OursFused && b.ib.kernel == 1 && b.ib.stride == 1 && b.ib.groups == 1 &&
               b.ib.cout == b.dw.cin && ownDepthwiseFor(b.dw, h);
    }

    // x rounded to the nearest bfloat16 (ties to even), as a float: what a bf16 weight holds.
    static float roundedToBf16(float x) { return onednn::floatOf(onednn::nearestBf16(x)); }

    // The first conv + bias + ReLU6 on our kernel (StemConv.h), straight from the caller's NCHW
    // images, where it applies (AVX-512, its shapes): true, and h is its output size. bf16 plans:
    // the inputs and weights rounded to bfloat16 as their reorders would, float32 sums, bf16 out.
    bool stemConv(const FoldedConv& c, int& h, float* dst)
    {
        const KernelWindow win = kernelWindow(c.kernel, c.stride, h);
        if (c.groups != 1 || !onednn::StemConv::available() || !onednn::StemConv::supports(c.cin, c.cout, win.size, c.stride))
            return false;
        std::vector<float> cropped;
        const float* w = croppedWeights(c, win, cropped);
        std::vector<float> weights(w, w + static_cast<std::size_t>(c.cout) * c.cin * win.size * win.size);
        if (actType == Dt::bf16)
            for (float& x : weights) x = roundedToBf16(x);
        auto stem = std::make_shared<onednn::StemConv>(c.cin, c.cout, h, win.size, c.stride, win.pad, weights.data(), c.bias.data());
        if (stem->outputSize() != (h - 1) / c.stride + 1) return false;
        if (actType == Dt::bf16)
            addOwn([this, stem, out = reinterpret_cast<onednn::Bf16*>(dst), images = n](float* scratch) {
                stem->run(static_cast<const float*>(input.get_data_handle()), out, images, scratch);
            }, stem->scratchFloats());
        else
            addOwn([this, stem, dst, images = n](float* scratch) {
                stem->run(static_cast<const float*>(input.get_data_handle()), dst, images, scratch);
            }, stem->scratchFloats());
        ownStem = true;
        h = stem->outputSize();
        return true;
    }

    // Our kernel runs this projection: OneDnnProjection::Ours, a 1×1 stride-1 conv to a channel
    // count it has code for; fp32 plans on AVX-512, bf16 plans on AVX-512 BF16 from an even count.
    bool ownProjectionFor(const FoldedConv& c) const
    {
        using onednn::PointwiseConv;
        if (projectionBy != OneDnnProjection::Ours || c.kernel != 1 || c.stride != 1 || c.groups != 1) return false;
        return actType == Dt::f32 ? PointwiseConv::available() && PointwiseConv::supports(c.cout)
                                  : PointwiseConv::availableBf16() && PointwiseConv::supportsBf16(c.cin, c.cout);
    }

    // A block's projection (1×1, stride 1, no activation) from src into dst (`add`: dst += it, the
    // residual): our kernel (PointwiseConv.h) where ownProjectionFor, otherwise a oneDNN convolution
    // with a sum post-op. `gates` (our kernel only, or null): the SE block's n × c.cin gates,
    // multiplied into the input channels as they are read (the SE multiply folded in).
    void projection(const FoldedConv& c, int h, float* src, float* dst, bool add, const float* gates)
    {
        if (ownProjectionFor(c)) {
            using onednn::PointwiseConv;
            const bool bf16 = actType == Dt::bf16;
            auto pw = std::make_shared<PointwiseConv>(c.cin, c.cout, c.weight.data(), c.bias.data(), add,
                                                      bf16 ? PointwiseConv::Storage::Bf16 : PointwiseConv::Storage::Fp32);
            const std::size_t pixels = static_cast<std::size_t>(h) * h;
            // The maps (and gates) as the plan's data type stores them.
            auto step = [&](const auto* s, auto* d, const auto* g) {
                if (g)
                    addOwn([pw, s, d, images = n, pixels, g](float* scratch) { pw->runGated(s, d, images, pixels, g, scratch); },
                           pw->gatedScratchFloats());
                else
                    addOwn([pw, s, d, pixels = pixels * n](float*) { pw->run(s, d, pixels); });
            };
            using onednn::Bf16;
            if (bf16)
                step(reinterpret_cast<const Bf16*>(src), reinterpret_cast<Bf16*>(dst), reinterpret_cast<const Bf16*>(gates));
            else
                step(static_cast<const float*>(src), dst, gates);
            ++ownProjections;
            return;
        }
        if (gates) throw std::logic_error("OneDnnPlan: SE gates folded into a projection our kernel does not run");
        dnnl::post_ops sum;
        if (add) sum.append_sum(1.f);
        conv(c, h, src, dst, sum);
    }

    void build(const FoldedSubnet& net, OneDnnStages stages)
    {
        const SubnetLayout& L = net.layout;
        resolution = L.resolution;
        classes = net.classes;
        const int batch = n;
        const std::size_t blocks = net.blocks.size();
        const bool twoStages = stages.headBatch > 0 && stages.headBatch < batch && batch % stages.headBatch == 0 &&
                               stages.tailFrom > 0 && stages.tailFrom < blocks;
        headBatch = twoStages ? stages.headBatch : batch;
        n = headBatch;   // the head's primitives; the tail's take the whole batch
        const std::size_t most = twoStages ? largestActivation(net, 0, stages.tailFrom) : largestActivation(net);   // per image
        std::size_t seMost = 1;
        for (const FoldedBlock& b : net.blocks) seMost = std::max<std::size_t>(seMost, static_cast<std::size_t>(b.shape.mid));
        for (auto& a : act) a = std::make_unique<Buffer>(most * static_cast<std::size_t>(headBatch));
        if (twoStages) {
            const std::size_t tailMost = largestActivation(net, stages.tailFrom, blocks);
            for (auto& a : tailAct) a = std::make_unique<Buffer>(tailMost * static_cast<std::size_t>(batch));
        }
        sePool = std::make_unique<Buffer>(seMost * batch);
        seMid = std::make_unique<Buffer>(seMost * batch);
        seGate = std::make_unique<Buffer>(seMost * batch);
        pooled = std::make_unique<Buffer>(static_cast<std::size_t>(net.mix.cout) * batch);
        float* buf[3] = {act[0]->data, act[1]->data, act[2]->data};

        // Input: the caller's NCHW pixels, read by our stem kernel as they are, or reordered into
        // NHWC for oneDNN's first conv.
        const memory::desc inUser({n, 3, resolution, resolution}, Dt::f32, Tag::nchw), inNhwc = nhwc(3, resolution);
        input = memory(inUser, eng, nullptr);
        int h = resolution, cur = 0;
        bool stem = false;
        layer("first_conv", [&] { stem = stemConv(net.first, h, buf[0]); });
        if (!stem) {
            layer("the input reorder", [&] {
                memory dst(inNhwc, eng, buf[2]);
                dnnl::reorder::primitive_desc pd(eng, inUser, eng, inNhwc, attrWith({}));
                add<dnnl::reorder>(pd, {{DNNL_ARG_FROM, input}, {DNNL_ARG_TO, dst}});
            });
            layer("first_conv", [&] { h = conv(net.first, h, buf[2], buf[0], relu6()); });
        }
        for (std::size_t i = 0; i < blocks; ++i) {
            const FoldedBlock& b = net.blocks[i];
            if (twoStages && i == stages.tailFrom) {
                // The junction: the head's output for this chunk into its place in the tail's input.
                const std::size_t chunkBytes = static_cast<std::size_t>(b.shape.cin) * h * h * headBatch * (actType == Dt::bf16 ? 2 : 4);
                const char* from = reinterpret_cast<const char*>(buf[cur]);
                char* to = reinterpret_cast<char*>(tailAct[0]->data);
                addOwn([this, from, to, chunkBytes](float*) { std::memcpy(to + static_cast<std::size_t>(chunk) * chunkBytes, from, chunkBytes); });
                headSteps = steps.size();
                n = batch;
                for (int k = 0; k < 3; ++k) buf[k] = tailAct[k]->data;
                cur = 0;
            }
            const std::string name = "blocks." + std::to_string(b.shape.index);
            const int a = (cur + 1) % 3, c = (cur + 2) % 3;
            if (b.shape.fused) {
                layer(name + ".point_linear", [&] { h = conv(b.pl, h, buf[cur], buf[a], {}); });
                cur = a;
                continue;
            }
            const int hin = h;
            const bool fuse = fusesExpansion(b, hin);   // then one step for both, from buf[cur]
            // SE: the pooling summed by our depthwise kernel as it stores, the multiply folded into
            // our projection's weights per image (neither map pass then runs).
            const bool se = !b.se_reduce_w.empty();
            const bool poolInDepthwise = se && (fuse || ownDepthwiseFor(b.dw, hin));
            const bool gateInProjection = se && ownProjectionFor(b.pl);
            layer(name + ".inverted_bottleneck", [&] {
                if (!fuse) conv(b.ib, hin, buf[cur], buf[a], relu6());
            });
            layer(name + ".depth_conv", [&] {
                // Fused: the expansion (1×1 + bias + ReLU6) and the depthwise conv as one step, from buf[cur].
                float* means = poolInDepthwise ? sePool->data : nullptr;
                h = fuse ? ourDepthwiseStep(b.dw, hin, buf[cur], buf[c], &b.ib, means) : depthwiseConv(b.dw, hin, buf[a], buf[c], means);
            });
            if (se) {
                layer(name + ".depth_conv.se", [&] {
                    squeezeExcite(b, h, buf[c], sePool->data, seMid->data, seGate->data, !poolInDepthwise, !gateInProjection);
                });
                fusedSeSteps += poolInDepthwise + gateInProjection;
            }
            const float* gates = gateInProjection ? seGate->data : nullptr;
            if (b.shape.residual) {
                // dst = conv + bias + dst: the block's input buffer becomes its output.
                layer(name + ".point_linear", [&] { projection(b.pl, h, buf[c], buf[cur], true, gates); });
            } else {
                layer(name + ".point_linear", [&] { projection(b.pl, h, buf[c], buf[a], false, gates); });
                cur = a;
            }
        }
        const int o = (cur + 1) % 3;
        layer("feature_mix_layer", [&] { h = conv(net.mix, h, buf[cur], buf[o], relu6()); });
        layer("the global average pooling", [&] { globalPool(net.mix.cout, h, buf[o], pooled->data); });
        layer("classifier", [&] {
            innerProduct(net.mix.cout, classes, net.fc_w, net.fc_b, pooled->data, nullptr, {}, Dt::f32);
        });
        logits = steps.back().args.at(DNNL_ARG_DST);
        bindScratchpad();
    }
};

OneDnnPlan::OneDnnPlan(const FoldedSubnet& net, int batch, OneDnnDtype dtype, OneDnnDepthwise depthwise, OneDnnStages stages,
                       OneDnnProjection projection)
    : impl_(std::make_unique<Impl>())
{
    if (batch < 1) throw OneDnnRefused("oneDNN plan: batch size must be at least 1, got " + std::to_string(batch));
    impl_->n = batch;
    impl_->actType = dtype == OneDnnDtype::Bf16 ? Dt::bf16 : Dt::f32;
    impl_->depthwise = depthwise;
    impl_->projectionBy = projection;
    const onednn::OneThreadScope oneThread;   // every primitive for one thread (see run)
    try {
        impl_->build(net, stages);
    } catch (const dnnl::error& e) {
        throw OneDnnRefused(std::string("oneDNN refused the subnet: ") + e.what());
    }
}

OneDnnPlan::~OneDnnPlan() = default;

int OneDnnPlan::batch() const { return impl_->n; }
int OneDnnPlan::headBatch() const { return impl_->headBatch; }
int OneDnnPlan::resolution() const { return impl_->resolution; }
int OneDnnPlan::classes() const { return impl_->classes; }
std::size_t OneDnnPlan::primitives() const { return impl_->steps.size(); }
std::size_t OneDnnPlan::ownDepthwise() const { return impl_->ownDepthwise; }
std::size_t OneDnnPlan::fusedExpansions() const { return impl_->fusedExpansions; }
std::size_t OneDnnPlan::ownProjections() const { return impl_->ownProjections; }
std::size_t OneDnnPlan::fusedSeSteps() const { return impl_->fusedSeSteps; }
bool OneDnnPlan::ownStem() const { return impl_->ownStem; }

std::size_t OneDnnPlan::bufferBytes() const
{
    const Impl& p = *impl_;
    std::size_t floats = 0;
    for (const auto& a : p.act) floats += a->count;
    for (const auto& a : p.tailAct)
        if (a) floats += a->count;
    for (const auto* b : {&p.sePool, &p.seMid, &p.seGate, &p.pooled, &p.scratch}) floats += (*b)->count;
    return floats * sizeof(float);
}

void OneDnnPlan::run(const float* images, float* logits)
{
    // One thread for our own steps; the caller's setting comes back after (it is per thread: a job
    // thread that measured a latency here and then trains with LibTorch must keep its threads).
    const onednn::OneThreadScope one;
    Impl& p = *impl_;
    p.logits.set_data_handle(logits);
    const std::size_t imageFloats = static_cast<std::size_t>(3) * p.resolution * p.resolution;
    // Two stages: the head chunk by chunk (its input handle moved along the batch), then the tail.
    for (p.chunk = 0; p.headSteps > 0 && p.chunk < p.n / p.headBatch; ++p.chunk) {
        p.input.set_data_handle(const_cast<float*>(images) + static_cast<std::size_t>(p.chunk) * p.headBatch * imageFloats);
        p.runSteps(0, p.headSteps);
    }
    if (p.headSteps == 0) p.input.set_data_handle(const_cast<float*>(images));
    p.runSteps(p.headSteps, p.steps.size());
    p.stream.wait();
}

}  // namespace tinyscope
