// Inference speed of extracted MCUNet-VWW subnets (largest and smallest, 96 and 160 px; batch 1 on
// 1 thread, batch 32 on 2 threads) against PyTorch eager on the same weights, machine, run and
// thread count, in two configurations (bench/torch_subnet_baseline.py):
//   tuned  the baseline: channels-last, BN fused into the convs, inference_mode, the same malloc
//          thresholds as ours — what a careful PyTorch user runs;
//   plain  PyTorch's defaults: NCHW, a separate BN after every conv, glibc's default allocator,
//          no_grad.
// Ours and the two PyTorch processes take turns, ROUNDS times per configuration; each turn runs the
// same number of calls, and the table gives the median images/s and the median of the per-round
// ratios. The logits' checksums of all three must agree.
//
// usage: bench_inference [ROUNDS] [SECONDS_PER_TURN]
#include "BenchTiming.h"
#include "PythonBaseline.h"
#include "SubnetForPython.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <chrono>
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
    std::printf("%d rounds per configuration, each turn ~%.1f s; medians over rounds\n\n", rounds, turnSeconds);
    std::printf("%-9s %4s %5s %7s | %10s %11s %11s | %9s %9s | %s\n", "subnet", "res", "batch", "threads", "ours img/s",
                "tuned img/s", "plain img/s", "vs tuned", "vs plain", "logit checksums: ours / tuned / plain");
    bool missing = false;
    for (int res : {96, 160}) {
        for (auto [name, base] : {std::pair<const char*, SubnetConfig>{"largest", sampler.fullMaxConfig(res)}, {"smallest", sampler.minConfig(res)}}) {
            Subnet sub = net.extract(base);
            files.write(sub);
            sub.setFolded(true);
            for (auto [batch, threads] : {std::pair<int, int>{1, 1}, {32, 2}}) {
                setTorchThreads(threads);
                at::Generator g = at::detail::createCPUGenerator(0);
                at::Tensor x = at::randn({batch, 3, res, res}, g);
                const double sum = sub.forward(x).to(at::kDouble).sum().item<double>();
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
                std::vector<double> ours, tunedT, plainT, vsTuned, vsPlain;
                for (int r = 0; r < rounds; ++r) {
                    auto t = Clock::now();
                    for (int i = 0; i < reps; ++i) sub.forward(x);
                    const double o = std::chrono::duration<double>(Clock::now() - t).count() / reps;
                    ours.push_back(o);
                    // Pauses let the other side's OpenMP threads stop spinning before a turn starts.
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    const double tt = tuned.secondsPerCall(reps);
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    const double pt = plain.secondsPerCall(reps);
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    if (tt > 0) tunedT.push_back(tt), vsTuned.push_back(tt / o);
                    if (pt > 0) plainT.push_back(pt), vsPlain.push_back(pt / o);
                }
                const double oursIps = batch / bench::median(ours);
                if (tunedT.empty() || plainT.empty()) {
                    missing = true;
                    std::printf("%-9s %4d %5d %7d | %10.1f %11s %11s | %9s %9s |\n", name, res, batch, threads, oursIps, "-", "-", "-", "-");
                } else {
                    std::printf("%-9s %4d %5d %7d | %10.1f %11.1f %11.1f | %8.2fx %8.2fx | %.6g / %.6g / %.6g\n", name, res, batch,
                                threads, oursIps, batch / bench::median(tunedT), batch / bench::median(plainT),
                                bench::median(vsTuned), bench::median(vsPlain), sum, tuned.checksum(), plain.checksum());
                }
                std::fflush(stdout);
            }
        }
    }
    if (missing) std::printf("\n%s\n", bench::missingPythonTorch());
    std::printf("\n%s (at the end)\n", bench::loadAverage().c_str());
    return 0;
}
