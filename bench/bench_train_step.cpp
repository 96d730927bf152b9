// One training step (forward + backward) of supernet subnets at batch 64 (or argv[3]): time per step for the
// largest and the smallest subnet, with oneDNN on and off, 1 and 2 threads, activations channels-last
// (what the trainer uses) and NCHW, with the ratio. Used to size the demo training runs
// (docs/SUPERNET_TRAINING.md).
#include "nn/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace tinyscope;

int main(int argc, char** argv)
{
    configureAllocator();
    const int res = argc > 1 ? std::atoi(argv[1]) : 36;
    const int iters = argc > 2 ? std::atoi(argv[2]) : 5;
    const int batch = argc > 3 ? std::atoi(argv[3]) : 64;
    DesignSpace space = presetSpace("mcunet-fmnist");
    Supernet net = Supernet::initialize(space, 0);
    ArchSampler s(space);
    at::Tensor x = at::randn({batch, 3, res, res});
    at::Tensor y = at::randint(0, 10, {batch}, at::kLong);
    for (bool mkldnn : {true, false}) {
        for (int threads : {2, 1}) {
            setMkldnnEnabled(mkldnn);
            setTorchThreads(threads);
            for (auto [name, cfg] : {std::pair<const char*, SubnetConfig>{"largest", s.fullMaxConfig(res)}, {"smallest", s.minConfig(res)}}) {
                cfg.image_size = res;
                double best[2] = {1e9, 1e9};
                for (int layout : {0, 1}) {
                    for (int i = 0; i < iters + 1; ++i) {
                        auto t0 = std::chrono::steady_clock::now();
                        NetWeights w = net.weightsFor(cfg);
                        ForwardOptions fo;
                        fo.bn = BnMode::Train;
                        fo.channels_last = layout == 0;
                        at::Tensor loss = at::cross_entropy_loss(forwardNet(w, x, fo), y);
                        loss.backward();
                        for (auto& p : net.parameters())
                            if (p.mutable_grad().defined()) p.mutable_grad().zero_();
                        double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                        if (i > 0 && sec < best[layout]) best[layout] = sec;
                    }
                }
                std::printf("res %d  batch %d  mkldnn %-3s threads %d  %-8s  channels-last %.3f s/step %5.0f img/s | NCHW %.3f s/step %5.0f img/s | %.2fx\n",
                            res, batch, mkldnn ? "on" : "off", threads, name, best[0], batch / best[0], best[1], batch / best[1],
                            best[1] / best[0]);
            }
        }
    }
    return 0;
}
