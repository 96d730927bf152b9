// Our AVX-512 depthwise convolution (core/nn/onednn/DepthwiseConv.h) against oneDNN's on the same
// shapes, one image, one thread: the depthwise layers of the largest MCUNet-VWW subnet at 160 px
// (7×7, stride 1 and 2, 80 down to 5 px) and a few of smaller subnets (5×5, 3×3, a masked channel
// block). Both with bias and ReLU6, NHWC. The two take turns, ROUNDS times; the table gives the
// median time of each, the median of the per-round ratios, GMAC/s against the FP32 FMA peak
// measured at the start (bench/FmaPeak.h; MACs as the cost model counts them: every tap, padding
// included), and the largest difference between the two outputs (0: bit for bit).
//
// A second table: our stem kernel (core/nn/onednn/StemConv.h: the first conv straight from the NCHW
// input) against what the plan ran before it, oneDNN's NCHW→NHWC reorder + its NHWC conv, on the
// stems of the VWW subnets (3 → 16 and 3 → 32 channels, 3×3 stride 2, 96 and 160 px) and of the
// Fashion-MNIST space (28, 36 px).
//
// usage: bench_depthwise [ROUNDS]
#include "BenchTiming.h"
#include "FmaPeak.h"
#include "nn/onednn/DepthwiseConv.h"
#include "nn/OneDnnInfo.h"
#include "nn/onednn/StemConv.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape {
    int channels, h, kernel, stride;
};

// Best-of-3 seconds per call of f, over enough calls for ~20 ms.
template <class F>
double secondsPerCall(F&& f, double macs)
{
    const int reps = std::max(5, static_cast<int>(2e9 / macs / 100));
    double best = 1e9;
    for (int r = 0; r < 3; ++r) {
        const auto t = Clock::now();
        for (int i = 0; i < reps; ++i) f();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count() / reps);
    }
    return best;
}

// Ours against oneDNN's on one shape: both run once, their outputs compared (largest difference),
// then timed in turns `rounds` times; medians of the times and of the per-round ratios.
struct Comparison {
    double theirs, ours, ratio, diff;
};

template <class T, class O>
Comparison compareRuns(T&& runTheirs, O&& runOurs, const std::vector<float>& theirs, const std::vector<float>& ours, double macs, int rounds)
{
    runTheirs();
    runOurs();
    double diff = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(ours[i] - theirs[i])));
    std::vector<double> tt, to, ratio;
    for (int r = 0; r < rounds; ++r) {
        tt.push_back(secondsPerCall(runTheirs, macs));
        to.push_back(secondsPerCall(runOurs, macs));
        ratio.push_back(tt.back() / to.back());
    }
    return {bench::median(tt), bench::median(to), bench::median(ratio), diff};
}

// oneDNN's convolution + bias + ReLU6 (clip 0..6) on NHWC `dst` from `src`, weights reordered from
// the user layout into the one the primitive chose: what the plans build.
struct DnnConv {
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward prim;
    dnnl::memory weights;
};

DnnConv dnnConv(const dnnl::engine& eng, dnnl::stream& stream, const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
                const dnnl::memory::desc& wUser, float* w, const dnnl::memory::desc& bias, int stride, int pad)
{
    const dnnl::memory::desc wAny(wUser.dims(), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wAny, bias, dst,
                                         {stride, stride}, {pad, pad}, {pad, pad});
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 6.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
    dnnl::memory wm(pd.weights_desc(), eng), wu(wUser, eng, w);
    dnnl::reorder(wu, wm).execute(stream, wu, wm);
    stream.wait();
    return {pd, dnnl::convolution_forward(pd), wm};
}

}  // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    bench::printMachine();
    if (!onednn::DepthwiseConv::available()) {
        std::printf("no AVX-512F on this CPU: the plan uses oneDNN's depthwise kernel; nothing to compare\n");
        return 0;
    }
    omp_set_num_threads(1);
    const bench::FmaPeak peak = bench::measureFmaPeak(1);
    std::printf("oneDNN %s, ISA %s; FP32 FMA peak measured: %.1f GMAC/s on one thread\n", oneDnnVersion().c_str(), oneDnnIsa().c_str(),
                peak.gmacsPerThread);
    std::printf("%d rounds, medians; one image, one thread, bias + ReLU6, NHWC\n\n", rounds);
    std::printf("%5s %4s %2s %2s | %10s %10s | %7s %7s | %9s | %8s | %s\n", "chan", "h", "k", "s", "oneDNN us", "ours us", "oneDNN", "ours",
                "ours/dnn", "max diff", "oneDNN's kernel");
    std::printf("%5s %4s %2s %2s | %10s %10s | %15s | %9s | %8s |\n", "", "", "", "", "", "", "% of peak", "", "");
    const Shape shapes[] = {{96, 80, 7, 2}, {144, 40, 7, 1}, {144, 40, 7, 2}, {240, 20, 7, 1}, {240, 20, 7, 2}, {480, 10, 7, 1},
                            {576, 10, 7, 1}, {576, 10, 7, 2}, {1152, 5, 7, 1}, {72, 40, 5, 1}, {48, 24, 3, 2}, {120, 6, 5, 1}, {40, 3, 5, 1}};
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(eng);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (const Shape& sh : shapes) {
        const int pad = sh.kernel / 2, ho = (sh.h + 2 * pad - sh.kernel) / sh.stride + 1;
        std::vector<float> x(static_cast<std::size_t>(sh.h) * sh.h * sh.channels), w(static_cast<std::size_t>(sh.channels) * sh.kernel * sh.kernel),
            b(sh.channels);
        for (float& v : x) v = u(rng) * 2;
        for (float& v : w) v = u(rng) / 3;
        for (float& v : b) v = u(rng);
        std::vector<float> ours(static_cast<std::size_t>(ho) * ho * sh.channels), theirs(ours.size());
        const onednn::DepthwiseConv dw(sh.channels, sh.h, sh.kernel, sh.stride, pad, w.data(), b.data(), true);
        float* scratch = static_cast<float*>(std::aligned_alloc(64, (dw.scratchFloats() * sizeof(float) + 63) / 64 * 64));

        using dnnl::memory;
        using Tag = memory::format_tag;
        using Dt = memory::data_type;
        const memory::desc s({1, sh.channels, sh.h, sh.h}, Dt::f32, Tag::nhwc), d({1, sh.channels, ho, ho}, Dt::f32, Tag::nhwc);
        const memory::desc wUser({sh.channels, 1, 1, sh.kernel, sh.kernel}, Dt::f32, Tag::goihw), bias({sh.channels}, Dt::f32, Tag::x);
        const DnnConv conv = dnnConv(eng, stream, s, d, wUser, w.data(), bias, sh.stride, pad);
        const auto& pd = conv.pd;
        memory sm(s, eng, x.data()), dm(d, eng, theirs.data()), bm(bias, eng, b.data());
        auto runTheirs = [&] {
            conv.prim.execute(stream, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, conv.weights}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, dm}});
            stream.wait();
        };
        auto runOurs = [&] { dw.run(x.data(), ours.data(), 1, scratch); };
        const double macs = static_cast<double>(sh.channels) * ho * ho * sh.kernel * sh.kernel;
        const Comparison c = compareRuns(runTheirs, runOurs, theirs, ours, macs, rounds);
        std::printf("%5d %4d %2d %2d | %10.1f %10.1f | %6.0f%% %6.0f%% | %8.2fx | %8.2g | %s\n", sh.channels, sh.h, sh.kernel, sh.stride, c.theirs * 1e6,
                    c.ours * 1e6, 100 * macs / c.theirs / 1e9 / peak.gmacsPerThread, 100 * macs / c.ours / 1e9 / peak.gmacsPerThread, c.ratio, c.diff,
                    pd.impl_info_str());
        std::free(scratch);
    }

    std::printf("\nstem: our kernel from NCHW against oneDNN's reorder + conv; one image, one thread, 3x3 stride 2, bias + ReLU6\n");
    std::printf("%4s %5s %4s | %10s %10s | %7s %7s | %9s | %8s | %s\n", "cin", "cout", "h", "oneDNN us", "ours us", "oneDNN", "ours",
                "ours/dnn", "max diff", "oneDNN's conv");
    struct Stem {
        int cout, h;
    };
    for (const Stem& st : {Stem{16, 96}, Stem{32, 96}, Stem{16, 160}, Stem{32, 160}, Stem{16, 28}, Stem{24, 36}}) {
        const int cin = 3, k = 3, stride = 2, pad = 1, ho = (st.h + 2 * pad - k) / stride + 1;
        std::vector<float> x(static_cast<std::size_t>(cin) * st.h * st.h), w(static_cast<std::size_t>(st.cout) * cin * k * k), b(st.cout);
        for (float& v : x) v = u(rng) * 2;
        for (float& v : w) v = u(rng) / 3;
        for (float& v : b) v = u(rng);
        std::vector<float> ours(static_cast<std::size_t>(ho) * ho * st.cout), theirs(ours.size()), nhwc(x.size());
        const onednn::StemConv stem(cin, st.cout, st.h, k, stride, pad, w.data(), b.data());
        float* scratch = static_cast<float*>(std::aligned_alloc(64, (stem.scratchFloats() * sizeof(float) + 63) / 64 * 64));
        using dnnl::memory;
        using Tag = memory::format_tag;
        using Dt = memory::data_type;
        const memory::desc user({1, cin, st.h, st.h}, Dt::f32, Tag::nchw), s({1, cin, st.h, st.h}, Dt::f32, Tag::nhwc),
            d({1, st.cout, ho, ho}, Dt::f32, Tag::nhwc);
        const memory::desc wUser({st.cout, cin, k, k}, Dt::f32, Tag::oihw), bias({st.cout}, Dt::f32, Tag::x);
        const DnnConv conv = dnnConv(eng, stream, s, d, wUser, w.data(), bias, stride, pad);
        const auto& pd = conv.pd;
        memory um(user, eng, x.data()), sm(s, eng, nhwc.data()), dm(d, eng, theirs.data()), bm(bias, eng, b.data());
        const dnnl::reorder toNhwc(um, sm);
        auto runTheirs = [&] {
            toNhwc.execute(stream, um, sm);
            conv.prim.execute(stream, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, conv.weights}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, dm}});
            stream.wait();
        };
        auto runOurs = [&] { stem.run(x.data(), ours.data(), 1, scratch); };
        const double macs = static_cast<double>(st.cout) * ho * ho * cin * k * k;
        const Comparison c = compareRuns(runTheirs, runOurs, theirs, ours, macs, rounds);
        std::printf("%4d %5d %4d | %10.2f %10.2f | %6.0f%% %6.0f%% | %8.2fx | %8.2g | %s\n", cin, st.cout, st.h, c.theirs * 1e6, c.ours * 1e6,
                    100 * macs / c.theirs / 1e9 / peak.gmacsPerThread, 100 * macs / c.ours / 1e9 / peak.gmacsPerThread, c.ratio, c.diff,
                    pd.impl_info_str());
        std::free(scratch);
    }
}
