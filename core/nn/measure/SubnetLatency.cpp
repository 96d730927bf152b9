#include "nn/measure/SubnetLatency.h"

#include "nn/onednn/FoldedSubnet.h"
#include "nn/onednn/OneDnnPlan.h"
#include "nn/supernet/Supernet.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace tinyscope {

namespace {

double medianMs(const std::function<void()>& run, int runs, int warmup)
{
    for (int i = 0; i < warmup; ++i) run();
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

Latency subnetLatency(Subnet& sub, int runs, int warmup)
{
    runs = std::max(runs, 1);
    sub.setFolded(true);
    const int r = sub.config().image_size;
    std::vector<float> image(static_cast<std::size_t>(3 * r * r), 0.5f);
    Latency out;
    out.runs = runs;
    try {
        OneDnnPlan plan(foldedSubnet(sub.weights()), 1);
        std::vector<float> logits(static_cast<std::size_t>(plan.classes()));
        out.ms = medianMs([&] { plan.run(image.data(), logits.data()); }, runs, warmup);
        out.engine = "oneDNN";
    } catch (const OneDnnRefused& e) {
        at::NoGradGuard guard;
        const at::Tensor x = at::from_blob(image.data(), {1, 3, r, r}, at::kFloat);
        out.ms = medianMs([&] { (void)sub.forward(x); }, runs, warmup);
        out.engine = std::string("LibTorch (oneDNN refused: ") + e.what() + ")";
    }
    return out;
}

}  // namespace tinyscope
