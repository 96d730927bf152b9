#include "nn/onednn/OneDnnInt8Accumulator.h"

#include "nn/onednn/OneDnnCommon.h"

#include <dnnl.hpp>

#include <atomic>
#include <cstdlib>
#include <optional>

namespace tinyscope {

namespace {
using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using onednn::kFloatExact;
}  // namespace

struct OneDnnInt8Accumulator::Impl {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    struct Conv {
        Int8ConvShape shape;
        std::optional<dnnl::convolution_forward> prim;
        memory::desc src, dst, scratchpad;
        memory weights;
        double sumAbsW = 0;   // largest Σ|w| of one output channel
    };
    std::vector<Conv> convs;
    mutable std::atomic<std::size_t> onDnn{0}, left{0};
};

OneDnnInt8Accumulator::OneDnnInt8Accumulator(const Int8Forward& forward) : impl_(std::make_unique<Impl>())
{
    Impl& p = *impl_;
    dnnl::stream stream(p.eng);
    const onednn::OneThreadScope oneThread;   // primitives for one thread, as accumulate runs them
    for (const Int8ConvShape& s : forward.convShapes()) {
        Impl::Conv c;
        c.shape = s;
        const int Cg = s.C / s.groups, per = Cg * s.KH * s.KW;
        std::vector<float> w(s.weight->size());
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((*s.weight)[i]);
        c.sumAbsW = onednn::largestChannelAbsSum(*s.weight, s.O, per);
        try {
            const memory::dims wdims = s.groups == 1 ? memory::dims{s.O, s.C, s.KH, s.KW}
                                                     : memory::dims{s.groups, s.O / s.groups, Cg, s.KH, s.KW};
            const memory::desc wUser(wdims, Dt::f32, s.groups == 1 ? Tag::oihw : Tag::goihw), wAny(wdims, Dt::f32, Tag::any);
            c.src = memory::desc({1, s.C, s.H, s.W}, Dt::f32, Tag::nchw);
            c.dst = memory::desc({1, s.O, s.HO, s.WO}, Dt::f32, Tag::nchw);
            dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, c.src, wAny, c.dst,
                                              {s.sh, s.sw}, {s.pt, s.pl}, {s.pb, s.pr});
            dnnl::primitive_attr attr;
            attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
            dnnl::convolution_forward::primitive_desc pd(d, attr, p.eng);
            memory user(wUser, p.eng, w.data());
            c.weights = memory(pd.weights_desc(), p.eng);
            dnnl::reorder(user, c.weights).execute(stream, user, c.weights);
            stream.wait();
            c.scratchpad = pd.scratchpad_desc();
            c.prim.emplace(pd);
        } catch (const dnnl::error&) {
            c.prim.reset();   // this conv stays on the loops
        }
        p.convs.push_back(std::move(c));
    }
}

OneDnnInt8Accumulator::~OneDnnInt8Accumulator() = default;

bool OneDnnInt8Accumulator::accumulate(std::size_t conv, const std::int32_t* x, std::int32_t* acc) const
{
    const Impl& p = *impl_;
    if (conv >= p.convs.size() || !p.convs[conv].prim) return false;
    const Impl::Conv& c = p.convs[conv];
    const Int8ConvShape& s = c.shape;
    const std::size_t n = static_cast<std::size_t>(s.C) * s.H * s.W, m = static_cast<std::size_t>(s.O) * s.HO * s.WO;
    std::vector<float> src(n), dst(m);
    double most = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t v = static_cast<std::int64_t>(x[i]) - s.zx;
        most = std::max(most, static_cast<double>(v < 0 ? -v : v));
        src[i] = static_cast<float>(v);
    }
    if (most * c.sumAbsW >= kFloatExact) {   // a partial sum might not be exact in float32
        ++p.left;
        return false;
    }
    std::vector<unsigned char> scratch(c.scratchpad.get_size());
    dnnl::stream stream(p.eng);
    // One thread per call (Int8Forward's callers parallelise over images).
    const onednn::OneThreadScope oneThread;
    c.prim->execute(stream, {{DNNL_ARG_SRC, memory(c.src, p.eng, src.data())},
                             {DNNL_ARG_WEIGHTS, c.weights},
                             {DNNL_ARG_DST, memory(c.dst, p.eng, dst.data())},
                             {DNNL_ARG_SCRATCHPAD, memory(c.scratchpad, p.eng, scratch.data())}});
    stream.wait();
    for (std::size_t i = 0; i < m; ++i) acc[i] = static_cast<std::int32_t>(dst[i]);
    ++p.onDnn;
    return true;
}

std::size_t OneDnnInt8Accumulator::convs() const { return impl_->convs.size(); }

std::size_t OneDnnInt8Accumulator::built() const
{
    std::size_t n = 0;
    for (const auto& c : impl_->convs) n += c.prim.has_value();
    return n;
}

std::size_t OneDnnInt8Accumulator::callsOnOneDnn() const { return impl_->onDnn; }
std::size_t OneDnnInt8Accumulator::callsLeft() const { return impl_->left; }

}  // namespace tinyscope
