// One supernet training step (forward + backward, BN in training mode, cross-entropy) of the
// largest and the smallest MCUNet-FMNIST subnet at 36 px, batch 64, on 2 and 1 threads, against
// PyTorch eager on the same subnet, machine, run and thread count (bench/torch_subnet_baseline.py):
//   tuned  the baseline: channels-last weights and activations, the same malloc thresholds as ours;
//   plain  PyTorch's defaults: NCHW, glibc's default allocator.
// Ours is what the trainer runs (channels-last, oneDNN on): the subnet's weights sliced out of the
// supernet inside the autograd graph (elastic kernels transformed), gradients into the supernet.
// PyTorch trains the extracted static subnet, which skips that slicing — a baseline in PyTorch's
// favour. Ours with NCHW activations is printed beside it (the layout decision, docs/
// SUPERNET_TRAINING.md). All four take turns, ROUNDS times per configuration; medians over rounds.
// The first step's loss of each must agree.
//
// usage: bench_train_step [ROUNDS] [RES] [BATCH]
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
    const int res = argc > 2 ? std::atoi(argv[2]) : 36;
    const int batch = argc > 3 ? std::atoi(argv[3]) : 64;
    bench::printMachine();
    bench::printKernels();
    DesignSpace space = presetSpace("mcunet-fmnist");
    Supernet net = Supernet::initialize(space, 0);
    ArchSampler s(space);
    at::Generator gx = at::detail::createCPUGenerator(0), gy = at::detail::createCPUGenerator(1);
    const at::Tensor x = at::randn({batch, 3, res, res}, gx);
    const at::Tensor y = at::randint(0, space.n_classes, {batch}, gy, at::TensorOptions(at::kLong));
    bench::SubnetForPython files("step");
    const std::string script = TINYSCOPE_SOURCE_DIR "/bench/torch_subnet_baseline.py";
    std::printf("res %d, batch %d, oneDNN on; %d rounds per configuration; medians over rounds (s/step)\n\n", res, batch, rounds);
    std::printf("%-7s %-8s | %8s %8s %8s %8s | %8s %8s %8s | %s\n", "threads", "subnet", "ours", "tuned", "plain", "ours NCHW",
                "vs tuned", "vs plain", "CL/NCHW", "first-step loss: ours / tuned / plain");
    bool missing = false;
    for (int threads : {2, 1}) {
        setTorchThreads(threads);
        for (auto [name, cfg] : {std::pair<const char*, SubnetConfig>{"largest", s.fullMaxConfig(res)}, {"smallest", s.minConfig(res)}}) {
            cfg.image_size = res;
            Subnet sub = net.extract(cfg);
            files.write(sub);
            double firstLoss = 0;
            auto step = [&](bool channelsLast) {
                NetWeights w = net.weightsFor(cfg);
                ForwardOptions fo;
                fo.bn = BnMode::Train;
                fo.channels_last = channelsLast;
                at::Tensor loss = at::cross_entropy_loss(forwardNet(w, x, fo), y);
                loss.backward();
                for (auto& p : net.parameters())
                    if (p.mutable_grad().defined()) p.mutable_grad().zero_();
                return loss.item<double>();
            };
            firstLoss = step(true);
            auto t0 = Clock::now();
            step(true);
            const int reps = std::max(1, static_cast<int>(1.0 / std::chrono::duration<double>(Clock::now() - t0).count()));
            std::vector<std::string> common = {files.ckpt, files.meta, std::to_string(res), std::to_string(batch), std::to_string(threads)};
            auto args = [&](const char* variant) {
                std::vector<std::string> a = {script, "train", variant};
                a.insert(a.end(), common.begin(), common.end());
                return a;
            };
            bench::PythonBaseline tuned(args("tuned")), plain(args("plain"));
            std::vector<double> ours, nchw, tunedT, plainT, vsTuned, vsPlain, layout;
            auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); };
            for (int r = 0; r < rounds; ++r) {
                for (bool cl : {true, false}) {
                    auto t = Clock::now();
                    for (int i = 0; i < reps; ++i) step(cl);
                    (cl ? ours : nchw).push_back(std::chrono::duration<double>(Clock::now() - t).count() / reps);
                    pause();
                }
                layout.push_back(nchw.back() / ours.back());
                const double tt = tuned.secondsPerCall(reps);
                pause();
                const double pt = plain.secondsPerCall(reps);
                pause();
                if (tt > 0) tunedT.push_back(tt), vsTuned.push_back(tt / ours.back());
                if (pt > 0) plainT.push_back(pt), vsPlain.push_back(pt / ours.back());
            }
            if (tunedT.empty() || plainT.empty()) {
                missing = true;
                std::printf("%-7d %-8s | %8.3f %8s %8s %8.3f | %8s %8s %7.2fx | %.5f\n", threads, name, bench::median(ours), "-", "-",
                            bench::median(nchw), "-", "-", bench::median(layout), firstLoss);
            } else {
                std::printf("%-7d %-8s | %8.3f %8.3f %8.3f %8.3f | %7.2fx %7.2fx %7.2fx | %.5f / %.5f / %.5f\n", threads, name,
                            bench::median(ours), bench::median(tunedT), bench::median(plainT), bench::median(nchw),
                            bench::median(vsTuned), bench::median(vsPlain), bench::median(layout), firstLoss, tuned.checksum(),
                            plain.checksum());
            }
            std::fflush(stdout);
        }
    }
    if (missing) std::printf("\n%s\n", bench::missingPythonTorch());
    std::printf("\n%s (at the end)\n", bench::loadAverage().c_str());
    return 0;
}
