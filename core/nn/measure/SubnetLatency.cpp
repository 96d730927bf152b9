#include "nn/measure/SubnetLatency.h"

#include "nn/onednn/FoldedSubnet.h"
#include "nn/onednn/OneDnnPlan.h"
#include "nn/supernet/Supernet.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace tinyscope {

namespace {

// One image through a folded subnet: a one-thread oneDNN plan, or LibTorch when oneDNN refuses it.
class OneImage {
public:
    explicit OneImage(Subnet& sub) : sub_(sub)
    {
        sub.setFolded(true);
        const int r = sub.config().image_size;
        image_.assign(static_cast<std::size_t>(3 * r * r), 0.5f);
        try {
            plan_ = std::make_unique<OneDnnPlan>(foldedSubnet(sub.weights()), 1);
            logits_.resize(static_cast<std::size_t>(plan_->classes()));
            engine_ = "oneDNN";
        } catch (const OneDnnRefused& e) {
            engine_ = std::string("LibTorch (oneDNN refused: ") + e.what() + ")";
        }
    }
    void run()
    {
        if (plan_) {
            plan_->run(image_.data(), logits_.data());
            return;
        }
        at::NoGradGuard guard;
        const int r = sub_.config().image_size;
        (void)sub_.forward(at::from_blob(image_.data(), {1, 3, r, r}, at::kFloat));
    }
    const std::string& engine() const { return engine_; }

private:
    Subnet& sub_;
    std::vector<float> image_, logits_;
    std::unique_ptr<OneDnnPlan> plan_;
    std::string engine_;
};

double milliseconds(OneImage& net)
{
    const auto t0 = std::chrono::steady_clock::now();
    net.run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> ms)
{
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

Latency subnetLatency(Subnet& sub, int runs, int warmup)
{
    runs = std::max(runs, 1);
    OneImage net(sub);
    for (int i = 0; i < warmup; ++i) net.run();
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) ms.push_back(milliseconds(net));
    return {median(ms), net.engine(), runs};
}

std::pair<Latency, Latency> subnetLatencies(Subnet& a, Subnet& b, int runs, int warmup)
{
    runs = std::max(runs, 1);
    OneImage na(a), nb(b);
    for (int i = 0; i < warmup; ++i) na.run(), nb.run();
    std::vector<double> ma, mb;
    for (int i = 0; i < runs; ++i) {   // taking turns: both see the same machine
        ma.push_back(milliseconds(na));
        mb.push_back(milliseconds(nb));
    }
    return {{median(ma), na.engine(), runs}, {median(mb), nb.engine(), runs}};
}

}  // namespace tinyscope
