#include "nn/onednn/OneDnnCalibration.h"

#include "nn/onednn/OneDnnSteps.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tinyscope {

namespace {

// The activation buffers of finished calibration plans, kept by the thread that ran them for its
// next plan. A plan is built per subnet (make-accdata: one per sample) and its maps take 10–30 MB
// at batch 100; allocated afresh, their pages cost 30–40 ms of faults on this project's VMs, half
// of a plan's build. At most three are kept per thread; their contents are stale (every step
// writes its output before a later one reads it).
thread_local std::vector<std::unique_ptr<onednn::Buffer>> tSpareBuffers;

std::unique_ptr<onednn::Buffer> takeBuffer(std::size_t floats)
{
    auto best = tSpareBuffers.end();
    for (auto it = tSpareBuffers.begin(); it != tSpareBuffers.end(); ++it)
        if ((*it)->count >= floats && (best == tSpareBuffers.end() || (*it)->count < (*best)->count)) best = it;
    if (best == tSpareBuffers.end()) return std::make_unique<onednn::Buffer>(floats);
    std::unique_ptr<onednn::Buffer> b = std::move(*best);
    tSpareBuffers.erase(best);
    return b;
}

void keepBuffer(std::unique_ptr<onednn::Buffer> b)
{
    tSpareBuffers.push_back(std::move(b));
    if (tSpareBuffers.size() > 3)
        tSpareBuffers.erase(std::min_element(tSpareBuffers.begin(), tSpareBuffers.end(),
                                             [](const auto& x, const auto& y) { return x->count < y->count; }));
}

}  // namespace

struct OneDnnCalibration::Impl : onednn::Steps {
    ~Impl()
    {
        for (auto& a : act)
            if (a) keepBuffer(std::move(a));
    }

    int resolution = 0;
    std::unique_ptr<onednn::Buffer> act[3], sePool, seMid, seGate;
    memory input;   // the caller's NCHW images; handle set per run
    // Each BN's batch mean and variance (oneDNN's outputs), in forward order.
    std::vector<memory> means, variances;

    // Batch normalisation of c × h × h (NHWC) in place with the batch's statistics (training mode:
    // mean and biased variance over the n · h · h pixels, kept in means / variances), × weight +
    // bias, then ReLU6 where `relu6`.
    void batchNorm(const BnAffine& bn, float eps, int c, int h, float* x, bool relu6)
    {
        const memory::desc d = nhwc(c, h);
        using Flags = dnnl::normalization_flags;
        dnnl::batch_normalization_forward::desc desc(prop_kind::forward_training, d, eps, Flags::use_scale | Flags::use_shift);
        dnnl::batch_normalization_forward::primitive_desc pd(desc, attrWith({}), eng);
        const memory::desc affine({c}, Dt::f32, Tag::x);
        memory xm(d, eng, x), mean(pd.mean_desc(), eng), variance(pd.variance_desc(), eng);
        add<dnnl::batch_normalization_forward>(pd, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, xm},
                 {DNNL_ARG_SCALE, owned(affine, bn.weight.data())}, {DNNL_ARG_SHIFT, owned(affine, bn.bias.data())},
                 {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, variance}});
        means.push_back(mean);
        variances.push_back(variance);
        if (!relu6) return;
        dnnl::eltwise_forward::desc clip(prop_kind::forward_inference, algorithm::eltwise_clip, d, 0.f, 6.f);
        dnnl::eltwise_forward::primitive_desc cpd(clip, attrWith({}), eng);
        add<dnnl::eltwise_forward>(cpd, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, xm}});
    }

    // conv (zero bias) + batch norm (+ ReLU6) from src into dst; returns the output size.
    int convBn(const FoldedConv& c, const BnAffine& bn, float eps, int h, float* src, float* dst, bool relu6)
    {
        const int ho = conv(c, h, src, dst, {});
        batchNorm(bn, eps, c.cout, ho, dst, relu6);
        return ho;
    }

    void build(const UnfoldedSubnet& u)
    {
        const FoldedSubnet& net = u.net;
        resolution = net.layout.resolution;
        const float eps = static_cast<float>(u.eps);
        const std::size_t most = largestActivation(net);
        std::size_t seMost = 1;
        for (const FoldedBlock& b : net.blocks) seMost = std::max<std::size_t>(seMost, static_cast<std::size_t>(b.shape.mid));
        for (auto& a : act) a = takeBuffer(most * static_cast<std::size_t>(n));
        sePool = std::make_unique<onednn::Buffer>(seMost * n);
        seMid = std::make_unique<onednn::Buffer>(seMost * n);
        seGate = std::make_unique<onednn::Buffer>(seMost * n);
        float* buf[3] = {act[0]->data, act[1]->data, act[2]->data};
        std::size_t k = 0;   // the next BN (u.bn is in forward order)
        auto bnAt = [&](const std::string& where) -> const BnAffine& {
            if (k >= u.bn.size()) throw OneDnnRefused("BN re-calibration: no BN weights for " + where);
            return u.bn[k++];
        };

        const memory::desc inUser({n, 3, resolution, resolution}, Dt::f32, Tag::nchw), inNhwc = nhwc(3, resolution);
        input = memory(inUser, eng, nullptr);
        int h = resolution, cur = 0;
        layer("the input reorder", [&] {
            dnnl::reorder::primitive_desc pd(eng, inUser, eng, inNhwc, attrWith({}));
            add<dnnl::reorder>(pd, {{DNNL_ARG_FROM, input}, {DNNL_ARG_TO, memory(inNhwc, eng, buf[2])}});
        });
        layer("first_conv", [&] { h = convBn(net.first, bnAt("first_conv"), eps, h, buf[2], buf[0], true); });
        for (const FoldedBlock& b : net.blocks) {
            const std::string name = "blocks." + std::to_string(b.shape.index);
            const int a = (cur + 1) % 3, c = (cur + 2) % 3;
            if (b.shape.fused) {   // one conv + BN, no activation
                layer(name + ".point_linear", [&] { h = convBn(b.pl, bnAt(name), eps, h, buf[cur], buf[a], false); });
                cur = a;
                continue;
            }
            const int hin = h;
            layer(name + ".inverted_bottleneck", [&] { convBn(b.ib, bnAt(name + ".inverted_bottleneck"), eps, hin, buf[cur], buf[a], true); });
            layer(name + ".depth_conv", [&] { h = convBn(b.dw, bnAt(name + ".depth_conv"), eps, hin, buf[a], buf[c], true); });
            if (!b.se_reduce_w.empty()) {
                layer(name + ".depth_conv.se", [&] { squeezeExcite(b, h, buf[c], sePool->data, seMid->data, seGate->data, true, true); });
            }
            layer(name + ".point_linear", [&] {
                convBn(b.pl, bnAt(name + ".point_linear"), eps, h, buf[c], buf[a], false);
                if (b.shape.residual) {   // the BN's output + the block's input, as LibTorch's y + x
                    const memory::desc d = nhwc(b.pl.cout, h);
                    dnnl::binary::desc desc(algorithm::binary_add, d, d, d);
                    dnnl::binary::primitive_desc pd(desc, attrWith({}), eng);
                    memory y(d, eng, buf[a]);
                    add<dnnl::binary>(pd, {{DNNL_ARG_SRC_0, y}, {DNNL_ARG_SRC_1, memory(d, eng, buf[cur])}, {DNNL_ARG_DST, y}});
                }
            });
            cur = a;
        }
        layer("feature_mix_layer", [&] { convBn(net.mix, bnAt("feature_mix_layer"), eps, h, buf[cur], buf[(cur + 1) % 3], true); });
        if (k != u.bn.size())
            throw OneDnnRefused("BN re-calibration: " + std::to_string(u.bn.size()) + " BN weights for " + std::to_string(k) + " BN layers");
        bindScratchpad();
    }
};

void addBnStatistics(BnStatisticSums& total, const BnStatisticSums& part)
{
    if (part.images == 0) return;
    if (total.mean.empty()) {
        total.mean.resize(part.mean.size());
        total.var.resize(part.var.size());
    }
    if (total.mean.size() != part.mean.size()) throw std::logic_error("addBnStatistics: statistics of another subnet");
    for (std::size_t i = 0; i < part.mean.size(); ++i) {
        total.mean[i].resize(part.mean[i].size(), 0.0);
        total.var[i].resize(part.var[i].size(), 0.0);
        for (std::size_t ch = 0; ch < part.mean[i].size(); ++ch) {
            total.mean[i][ch] += part.mean[i][ch];
            total.var[i][ch] += part.var[i][ch];
        }
    }
    total.images += part.images;
}

OneDnnCalibration::OneDnnCalibration(const UnfoldedSubnet& net, int batch) : impl_(std::make_unique<Impl>())
{
    if (batch < 1) throw OneDnnRefused("BN re-calibration on oneDNN: batch size must be at least 1, got " + std::to_string(batch));
    impl_->n = batch;
    const onednn::OneThreadScope oneThread;   // every primitive for one thread (see the header)
    try {
        impl_->build(net);
    } catch (const dnnl::error& e) {
        throw OneDnnRefused(std::string("oneDNN refused the subnet's BN re-calibration: ") + e.what());
    }
}

OneDnnCalibration::~OneDnnCalibration() = default;

int OneDnnCalibration::batch() const { return impl_->n; }
int OneDnnCalibration::resolution() const { return impl_->resolution; }
std::size_t OneDnnCalibration::primitives() const { return impl_->steps.size(); }

void OneDnnCalibration::run(const float* images, BnStatisticSums& sums)
{
    Impl& p = *impl_;
    const onednn::OneThreadScope oneThread;
    p.input.set_data_handle(const_cast<float*>(images));
    p.runSteps(0, p.steps.size());
    p.stream.wait();
    const std::size_t layers = p.means.size();
    if (sums.mean.empty()) {
        sums.mean.resize(layers);
        sums.var.resize(layers);
    }
    if (sums.mean.size() != layers) throw std::logic_error("OneDnnCalibration: statistics of another subnet");
    const double weight = p.n;   // each batch weighted by its size
    for (std::size_t i = 0; i < layers; ++i) {
        const float* m = static_cast<const float*>(p.means[i].get_data_handle());
        const float* v = static_cast<const float*>(p.variances[i].get_data_handle());
        const std::size_t c = p.means[i].get_desc().get_size() / sizeof(float);
        sums.mean[i].resize(c, 0.0);
        sums.var[i].resize(c, 0.0);
        for (std::size_t ch = 0; ch < c; ++ch) {
            sums.mean[i][ch] += weight * m[ch];
            sums.var[i][ch] += weight * v[ch];
        }
    }
    sums.images += p.n;
}

}  // namespace tinyscope
