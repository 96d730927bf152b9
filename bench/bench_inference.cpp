// Inference speed of extracted MCUNet-VWW subnets (largest and smallest, 96 and 160 px; batch 1 on
// 1 thread, batch 32 on 2 threads) against PyTorch eager on the same weights, machine, run and
// thread count, in two configurations (bench/torch_subnet_baseline.py):
//   tuned  the baseline: channels-last, BN fused into the convs, inference_mode, the same malloc
//          thresholds as ours — what a careful PyTorch user runs;
//   plain  PyTorch's defaults: NCHW, a separate BN after every conv, glibc's default allocator,
//          no_grad.
// Ours runs on two engines (EvalEngine): LibTorch's forwardNet and the oneDNN plan
// (core/nn/onednn, docs/ONEDNN.md). The four take turns, ROUNDS times per configuration, each
// round's order rotated by one (a turn right after a memory-heavy one runs slower); each turn runs
// the same number of calls, and the table gives the median images/s and the median of the
// per-round ratios. The logits' checksums of all four must agree. oneDNN's achieved GMAC/s (the
// cost model's MACs without BN, which is folded) is printed as a share of the FP32 FMA peak measured
// at the start of the run (bench/FmaPeak.h; the nominal 2.1 GHz x 2 FMA x 16 lanes is printed too),
// and as the median share of the peak measured again just before each round's oneDNN turn.
// Where oneDNN has native bf16 (AVX-512 BF16 or AMX) a second line per row times the bf16 plan in
// the same rounds (its checksum differs from fp32's by bf16 rounding), and a third the int8 plan
// (OneDnnInt8Engine: our PTQ of the subnet, Int8Forward's exact arithmetic, batched on oneDNN),
// with the speed ratio of its fused expansions to the same plan with separate ones in the same rounds.
//
// usage: bench_inference [ROUNDS] [SECONDS_PER_TURN]
#include "BenchTiming.h"
#include "FmaPeak.h"
#include "PythonBaseline.h"
#include "SubnetForPython.h"
#include "cost/CostModel.h"
#include "graph/ForwardLowering.h"
#include "nn/onednn/OneDnnInt8Plan.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "zoo/SubnetNetwork.h"
#include "nn/OneDnnInfo.h"
#include "nn/onednn/OneDnnSubnet.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;


int main(int argc, char** argv)
{
    configureAllocator();
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const double turnSeconds = argc > 2 ? std::atof(argv[2]) : 0.3;
    bench::printMachine();
    bench::printKernels();
    DesignSpace space = presetSpace("mcunet-vww");
    Supernet net = Supernet::initialize(space, 1);
    ArchSampler sampler(space);
    bench::SubnetForPython files("inf");
    const std::string script = TINYSCOPE_SOURCE_DIR "/bench/torch_subnet_baseline.py";
    // The FP32 FMA peak, measured (one thread alone, two at once): a VM's nominal clock (2.1 GHz on
    // machine A) is not what its cores run at, and a convolution exceeded the nominal peak there.
    // The engine's vector width: oneDNN's ISA (ONEDNN_MAX_CPU_ISA bounds it and our kernels alike).
    const bool avx512 = oneDnnIsa().rfind("avx512", 0) == 0;
    const bench::FmaPeak peak = bench::measureFmaPeak(2, 5, 0.1, avx512);
    auto peakFor = [&](int threads) { return threads == 1 ? peak.gmacsPerThread : peak.gmacsAll; };
    std::printf("oneDNN %s (%s threads), ISA %s\n", oneDnnVersion().c_str(), oneDnnThreading().c_str(), oneDnnIsa().c_str());
    std::printf("FP32 FMA peak measured (%d-lane FMA loop, best of 5): %.1f GMAC/s on 1 thread, %.1f on 2 at once "
                "(nominal 2.1 GHz x 2 FMA x 16 lanes = 67.2 per thread)\n",
                peak.lanes, peak.gmacsPerThread, peak.gmacsAll);
    std::printf("%d rounds per configuration, each turn ~%.1f s; medians over rounds\n\n", rounds, turnSeconds);
    std::printf("%-9s %4s %5s %3s | %9s %9s %9s %9s | %8s %8s %8s %8s | %22s | %s\n", "subnet", "res", "batch", "thr", "onednn",
                "libtorch", "pt tuned", "pt plain", "dnn/tuned", "dnn/lt", "lt/tuned", "dnn/plain", "dnn GMAC/s, of measured peak (best round)",
                "logit checksums: onednn / libtorch / tuned / plain");
    bool missing = false;
    for (int res : {96, 160}) {
        for (auto [name, base] : {std::pair<const char*, SubnetConfig>{"largest", sampler.fullMaxConfig(res)}, {"smallest", sampler.minConfig(res)}}) {
            Subnet sub = net.extract(base);
            files.write(sub);
            sub.setFolded(true);
            OneDnnSubnet dnn(sub);
            // The same fp32 plan with every block projection on oneDNN's 1×1 conv (ours / oneDNN's).
            OneDnnSubnet dnnTheirProjections(sub, OneDnnDtype::Fp32, OneDnnDepthwise::OursFused, OneDnnProjection::OneDnn);
            // bf16 (activations and weights; f32 accumulation and logits) where oneDNN has native bf16.
            std::unique_ptr<OneDnnSubnet> bf16;
            if (oneDnnHasBf16()) bf16 = std::make_unique<OneDnnSubnet>(sub, OneDnnDtype::Bf16);
            const double macs = static_cast<double>(CostModel(space).summary(base).macs_without_bn);
            // int8: our PTQ of this subnet (16 random calibration images) on the batched int8 plan,
            // Int8Forward's exact arithmetic (the same classes as Int8Forward; test_onednn_engine).
            const Network network = networkFromSubnet(space, base);
            at::Generator cg = at::detail::createCPUGenerator(7);
            const QuantizedParams qparams = quantizeModel(floatModelFromSubnet(network, sub), at::randn({16, 3, res, res}, cg));
            const TrainingGraph qgraph = lowerForward(network);
            const Int8Forward int8(qgraph, qparams);
            OneDnnInt8Engine int8Engine(int8);
            // The same plan with each block's expansion as its own oneDNN conv (fused / separate).
            OneDnnInt8Engine int8Separate(int8, OneDnnInt8Storage::Auto, OneDnnInt8Expansion::Separate);
            for (auto [batch, threads] : {std::pair<int, int>{1, 1}, {32, 2}}) {
                setTorchThreads(threads);
                at::Generator g = at::detail::createCPUGenerator(0);
                at::Tensor x = at::randn({batch, 3, res, res}, g);
                const double sum = sub.forward(x).to(at::kDouble).sum().item<double>();
                const double dnnSum = dnn.forward(x).to(at::kDouble).sum().item<double>();   // builds the plan
                dnnTheirProjections.forward(x);
                const double bf16Sum = bf16 ? bf16->forward(x).to(at::kDouble).sum().item<double>() : 0.0;
                auto t0 = Clock::now();
                sub.forward(x);
                const double once = std::chrono::duration<double>(Clock::now() - t0).count();
                const int reps = std::max(1, static_cast<int>(turnSeconds / std::max(once, 1e-6)));
                const std::vector<std::string> common = {files.ckpt, files.meta, std::to_string(res), std::to_string(batch), std::to_string(threads)};
                auto args = [&](const char* variant) {
                    std::vector<std::string> a = {script, "infer", variant};
                    a.insert(a.end(), common.begin(), common.end());
                    return a;
                };
                bench::PythonBaseline tuned(args("tuned")), plain(args("plain"));
                at::Tensor logits = at::empty({batch, space.n_classes});
                const float* px = x.data_ptr<float>();
                std::vector<int> classes(static_cast<std::size_t>(batch));
                std::vector<double> int8T, int8VsSeparate, int8VsDnn, int8VsTuned, ours, dnnT, tunedT, plainT, vsTuned, vsPlain, dnnVsTuned, dnnVsOurs, dnnVsPlain, bf16T, bf16VsDnn, bf16VsTuned, projectionsT, oursVsTheirProjections, roundPeak, roundShare;
                // One turn: `reps` calls of f after a pause (it lets the other side's OpenMP threads
                // stop spinning), seconds per call.
                auto turn = [&](auto&& f) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    const auto t = Clock::now();
                    for (int i = 0; i < reps; ++i) f();
                    return std::chrono::duration<double>(Clock::now() - t).count() / reps;
                };
                // The turns of a round start from a different engine each round (rotated): a turn
                // right after a memory-heavy one runs slower (BENCHMARKS.md, "A lead"), so a fixed
                // order would always penalise the same engine.
                for (int r = 0; r < rounds; ++r) {
                    double o = 0, d = 0, tp = 0, bt = 0, it8 = 0, sep = 0, tt = 0, pt = 0;
                    const std::vector<std::function<void()>> turns = {
                        [&] { o = turn([&] { sub.forward(x); }); },
                        [&] {
                            // The peak again just before the turn: a VM's speed drifts between phases,
                            // and a share of a peak measured minutes earlier mixes the two.
                            const bench::FmaPeak now = bench::measureFmaPeak(threads, 1, 0.05, avx512);
                            d = turn([&] { dnn.forward(px, batch, logits.data_ptr<float>()); });
                            roundPeak.push_back(threads == 1 ? now.gmacsPerThread : now.gmacsAll);
                        },
                        [&] { tp = turn([&] { dnnTheirProjections.forward(px, batch, logits.data_ptr<float>()); }); },
                        [&] {
                            if (bf16) bt = turn([&] { bf16->forward(px, batch, logits.data_ptr<float>()); });
                        },
                        [&] { it8 = turn([&] { int8Engine.predict(px, batch, threads, classes.data()); }); },
                        [&] { sep = turn([&] { int8Separate.predict(px, batch, threads, classes.data()); }); },
                        // Pauses let the other side's OpenMP threads stop spinning before a turn starts.
                        [&] {
                            std::this_thread::sleep_for(std::chrono::milliseconds(50));
                            tt = tuned.secondsPerCall(reps);
                            std::this_thread::sleep_for(std::chrono::milliseconds(50));
                        },
                        [&] {
                            std::this_thread::sleep_for(std::chrono::milliseconds(50));
                            pt = plain.secondsPerCall(reps);
                            std::this_thread::sleep_for(std::chrono::milliseconds(50));
                        },
                    };
                    for (std::size_t k = 0; k < turns.size(); ++k) turns[(k + static_cast<std::size_t>(r)) % turns.size()]();
                    ours.push_back(o);
                    dnnT.push_back(d);
                    roundShare.push_back(macs * batch / d / 1e9 / roundPeak.back());
                    dnnVsOurs.push_back(o / d);
                    projectionsT.push_back(tp);
                    oursVsTheirProjections.push_back(tp / d);
                    if (bf16) bf16T.push_back(bt), bf16VsDnn.push_back(d / bt);
                    int8T.push_back(it8);
                    int8VsDnn.push_back(d / it8);
                    int8VsSeparate.push_back(sep / it8);
                    if (tt > 0) tunedT.push_back(tt), vsTuned.push_back(tt / o), dnnVsTuned.push_back(tt / d);
                    if (tt > 0 && bt > 0) bf16VsTuned.push_back(tt / bt);
                    if (tt > 0) int8VsTuned.push_back(tt / it8);
                    if (pt > 0) plainT.push_back(pt), vsPlain.push_back(pt / o), dnnVsPlain.push_back(pt / d);
                }
                const double oursIps = batch / bench::median(ours), dnnIps = batch / bench::median(dnnT);
                // Median and best round: on a shared machine the best round is the closer estimate of
                // what the engine reaches on idle cores.
                const double gmacs = macs * dnnIps / 1e9, best = macs * batch / *std::min_element(dnnT.begin(), dnnT.end()) / 1e9;
                char rate[48];
                std::snprintf(rate, sizeof rate, "%.1f %.0f%% (%.0f%%)", gmacs, 100 * gmacs / peakFor(threads),
                              100 * best / peakFor(threads));
                if (tunedT.empty() || plainT.empty()) {
                    missing = true;
                    std::printf("%-9s %4d %5d %3d | %9.1f %9.1f %9s %9s | %8s %7.2fx %8s %8s | %22s | %.6g / %.6g\n", name, res, batch, threads,
                                dnnIps, oursIps, "-", "-", "-", bench::median(dnnVsOurs), "-", "-", rate, dnnSum, sum);
                } else {
                    std::printf("%-9s %4d %5d %3d | %9.1f %9.1f %9.1f %9.1f | %7.2fx %7.2fx %7.2fx %7.2fx | %22s | %.6g / %.6g / %.6g / %.6g\n",
                                name, res, batch, threads, dnnIps, oursIps, batch / bench::median(tunedT), batch / bench::median(plainT),
                                bench::median(dnnVsTuned), bench::median(dnnVsOurs), bench::median(vsTuned), bench::median(dnnVsPlain), rate,
                                dnnSum, sum, tuned.checksum(), plain.checksum());
                }
                std::printf("%-9s %4d %5d %3d | fp32 of the peak measured just before each turn: median %.0f%% (best %.0f%%), that peak %.1f-%.1f GMAC/s\n",
                            name, res, batch, threads, 100 * bench::median(roundShare), 100 * *std::max_element(roundShare.begin(), roundShare.end()),
                            *std::min_element(roundPeak.begin(), roundPeak.end()), *std::max_element(roundPeak.begin(), roundPeak.end()));
                std::printf("%-9s %4d %5d %3d | fp32 with oneDNN's projections %9.1f img/s | our projections (%zu) / oneDNN's %5.2fx\n", name, res, batch,
                            threads, batch / bench::median(projectionsT), dnn.prepare(1).ownProjections(),
                            bench::median(oursVsTheirProjections));
                if (bf16)
                    std::printf("%-9s %4d %5d %3d | bf16 %9.1f img/s | bf16/fp32 %6.2fx | bf16/tuned %6.2fx | checksum %.6g (fp32 %.6g)\n", name,
                                res, batch, threads, batch / bench::median(bf16T), bench::median(bf16VsDnn),
                                bf16VsTuned.empty() ? 0.0 : bench::median(bf16VsTuned), bf16Sum, dnnSum);
                std::printf("%-9s %4d %5d %3d | int8 %9.1f img/s | int8/fp32 %6.2fx | int8/tuned %6.2fx | fused/separate expansion %5.2fx | int8 plan (exact arithmetic), %s storage (separate: %s)%s\n",
                            name, res, batch, threads, batch / bench::median(int8T), bench::median(int8VsDnn),
                            int8VsTuned.empty() ? 0.0 : bench::median(int8VsTuned), bench::median(int8VsSeparate),
                            int8Engine.storage() == OneDnnInt8Storage::Uint8 ? "uint8" : "float",
                            int8Separate.storage() == OneDnnInt8Storage::Uint8 ? "uint8" : "float",
                            int8Engine.imagesOnLoops() ? ", some images on Int8Forward" : "");
                std::fflush(stdout);
            }
        }
    }
    if (missing) std::printf("\n%s\n", bench::missingPythonTorch());
    std::printf("\n%s (at the end)\n", bench::loadAverage().c_str());
    return 0;
}
