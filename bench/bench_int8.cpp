// Int8 inference of quantized subnets (our PTQ, Int8Forward's exact arithmetic) on the three
// engines that compute the same int8 logits — Int8Forward's per-image loops, the same with the
// convs' sums on oneDNN (OneDnnInt8Accumulator), and the batched int8 plan (OneDnnInt8Engine) —
// beside the fp32 oneDNN plan of the same subnet (OneDnnSubnet), on the same images, machine and
// thread count. The engines take turns, ROUNDS times; medians of images/s and of the per-round
// ratios. The int8 engines' predicted classes must agree (printed as a count of matches).
//
// usage: bench_int8 [ROUNDS] [SECONDS_PER_TURN]
#include "BenchTiming.h"
#include "PythonBaseline.h"
#include "graph/ForwardLowering.h"
#include "nn/TorchRuntime.h"
#include "nn/OneDnnInfo.h"
#include "nn/onednn/OneDnnInt8Accumulator.h"
#include "nn/onednn/OneDnnInt8Plan.h"
#include "nn/onednn/OneDnnSubnet.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/supernet/Supernet.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "zoo/SubnetNetwork.h"

#include <ATen/ATen.h>

#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv)
{
    configureAllocator();
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    const double turnSeconds = argc > 2 ? std::atof(argv[2]) : 0.5;
    bench::printMachine();
    bench::printKernels();
    std::printf("oneDNN %s (%s threads), ISA %s\n", oneDnnVersion().c_str(), oneDnnThreading().c_str(), oneDnnIsa().c_str());
    std::printf("%d rounds, each turn ~%.1f s; medians over rounds; 64 images per call; Int8Forward's exact arithmetic\n\n", rounds, turnSeconds);
    std::printf("%-9s %4s %3s | %9s %9s %9s %9s | %9s %9s %9s | %s\n", "subnet", "res", "thr", "loops", "loops+acc", "int8 plan", "fp32 plan",
                "plan/loops", "plan/acc", "plan/fp32", "classes agreeing (plan = loops)");
    const DesignSpace space = presetSpace("mcunet-fmnist");
    const Supernet net = Supernet::initialize(space, 3);
    ArchSampler sampler(space);
    const int n = 64;
    for (auto [name, config] : {std::pair<const char*, SubnetConfig>{"largest", sampler.fullMaxConfig(36)}, {"smallest", sampler.minConfig(28)}}) {
        Subnet sub = net.extract(config);
        const Network network = networkFromSubnet(space, config);
        const int r = config.image_size;
        at::Generator g = at::detail::createCPUGenerator(5);
        const QuantizedParams params = quantizeModel(floatModelFromSubnet(network, sub), at::randn({16, 3, r, r}, g));
        const TrainingGraph graph = lowerForward(network);
        const Int8Forward loops(graph, params);
        Int8Forward withAcc(graph, params);
        withAcc.setConvAccumulator(std::make_shared<OneDnnInt8Accumulator>(withAcc));
        sub.setFolded(true);
        OneDnnSubnet fp32(sub);
        OneDnnInt8Engine plan(loops);
        const at::Tensor x = at::randn({n, 3, r, r}, g).contiguous();
        const float* px = x.data_ptr<float>();
        const std::size_t per = static_cast<std::size_t>(3) * r * r;
        for (int threads : {1, 2}) {
            setTorchThreads(threads);
            std::vector<int> a(n), b(n);
            // Int8Forward on `threads` workers over the images, as evaluateInt8 runs it.
            auto onLoops = [&](const Int8Forward& f, std::vector<int>& out) {
                std::vector<std::thread> pool;
                for (int t = 0; t < threads; ++t)
                    pool.emplace_back([&, t] {
                        for (int i = t; i < n; i += threads) out[static_cast<std::size_t>(i)] = f.predict(px + i * per);
                    });
                for (auto& th : pool) th.join();
            };
            onLoops(loops, a);
            plan.predict(px, n, threads, b.data());
            int agree = 0;
            for (int i = 0; i < n; ++i) agree += a[static_cast<std::size_t>(i)] == b[static_cast<std::size_t>(i)];
            at::Tensor logits = at::empty({n, space.n_classes});
            fp32.forward(px, n, logits.data_ptr<float>());
            auto timed = [&](const std::function<void()>& f, double reps) {
                const auto t = Clock::now();
                for (int i = 0; i < reps; ++i) f();
                return std::chrono::duration<double>(Clock::now() - t).count() / reps;
            };
            const auto t0 = Clock::now();
            onLoops(loops, a);
            const double once = std::chrono::duration<double>(Clock::now() - t0).count();
            const int slowReps = std::max(1, static_cast<int>(turnSeconds / once));
            std::vector<double> tl, ta, tp, tf, pl, pa, pf;
            for (int round = 0; round < rounds; ++round) {
                const double l = timed([&] { onLoops(loops, a); }, slowReps);
                const double ac = timed([&] { onLoops(withAcc, a); }, slowReps);
                const int fastReps = std::max(1, static_cast<int>(turnSeconds / std::max(ac / 4, 1e-6)));
                const double p = timed([&] { plan.predict(px, n, threads, b.data()); }, fastReps);
                const double f = timed([&] { fp32.forward(px, n, logits.data_ptr<float>()); }, fastReps);
                tl.push_back(l), ta.push_back(ac), tp.push_back(p), tf.push_back(f);
                pl.push_back(l / p), pa.push_back(ac / p), pf.push_back(f / p);
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            std::printf("%-9s %4d %3d | %9.1f %9.1f %9.1f %9.1f | %8.2fx %8.2fx %8.2fx | %d of %d; %s storage%s\n", name, r, threads,
                        n / bench::median(tl), n / bench::median(ta), n / bench::median(tp), n / bench::median(tf), bench::median(pl),
                        bench::median(pa), bench::median(pf), agree, n, plan.storage() == OneDnnInt8Storage::Uint8 ? "uint8" : "float",
                        plan.imagesOnLoops() ? " (some images ran on Int8Forward)" : "");
            std::fflush(stdout);
        }
    }
    std::printf("\nimages/s; plan/fp32 > 1 means the int8 plan is faster than the fp32 plan of the same subnet\n");
    std::printf("%s (at the end)\n", bench::loadAverage().c_str());
    return 0;
}
