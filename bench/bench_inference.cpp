// Inference speed of extracted subnets against PyTorch eager on the same machine, same run, same
// thread count: images/s of the largest and smallest MCUNet-VWW subnet at 96 and 160 px, batch 1
// (1 thread) and batch 32 (2 threads). PyTorch runs the same weights through torch.nn.functional
// in Debian's python3-torch (/usr/bin/python3); both print their logits' checksum, which must agree.
#include "nn/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace tinyscope;

static const char* kPython = R"PY(
import sys, json, time, torch
import torch.nn.functional as F
ckpt, cfg_path, res, batch, threads, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
torch.set_num_threads(threads)
sd = torch.load(ckpt)['state_dict']
meta = json.load(open(cfg_path))
eps = 1e-3
def bn(x, p):
    return F.batch_norm(x, sd[p + 'running_mean'], sd[p + 'running_var'], sd[p + 'weight'], sd[p + 'bias'], False, 0.0, eps)
def conv(x, p, stride=1, groups=1):
    w = sd[p + 'weight']
    return F.conv2d(x, w, None, stride, w.shape[-1] // 2, 1, groups)
def forward(x):
    x = F.hardtanh(bn(conv(x, 'first_conv.conv.', 2), 'first_conv.bn.'), 0, 6)
    for b in meta['blocks']:
        p = 'blocks.%d.mobile_inverted_conv.' % b['index']
        if b['fused']:
            x = bn(conv(x, p + 'point_linear.conv.'), p + 'point_linear.bn.')
            continue
        y = F.hardtanh(bn(conv(x, p + 'inverted_bottleneck.conv.'), p + 'inverted_bottleneck.bn.'), 0, 6)
        y = F.hardtanh(bn(conv(y, p + 'depth_conv.conv.', b['stride'], y.shape[1]), p + 'depth_conv.bn.'), 0, 6)
        if b['se']:
            s = y.mean((2, 3), keepdim=True)
            s = F.hardtanh(F.conv2d(s, sd[p + 'depth_conv.se.fc.reduce.weight'], sd[p + 'depth_conv.se.fc.reduce.bias']), 0, 6)
            s = F.conv2d(s, sd[p + 'depth_conv.se.fc.expand.weight'], sd[p + 'depth_conv.se.fc.expand.bias'])
            y = y * (F.hardtanh(s + 3, 0, 6) / 6)
        y = bn(conv(y, p + 'point_linear.conv.'), p + 'point_linear.bn.')
        x = y + x if b['residual'] else y
    x = F.hardtanh(bn(conv(x, 'feature_mix_layer.conv.'), 'feature_mix_layer.bn.'), 0, 6)
    return F.linear(x.mean((2, 3)), sd['classifier.linear.weight'], sd['classifier.linear.bias'])
g = torch.Generator().manual_seed(0)
x = torch.randn(batch, 3, res, res, generator=g)
with torch.no_grad():
    out = forward(x)
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter(); forward(x); best = min(best, time.perf_counter() - t)
print(batch / best, float(out.double().sum()))
)PY";

int main(int argc, char** argv)
{
    configureAllocator();
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    DesignSpace space = presetSpace("mcunet-vww");
    Supernet net = Supernet::initialize(space, 1);
    ArchSampler sampler(space);
    char dir[] = "/tmp/tinyscope-bench-inf-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char script[512];
    std::snprintf(script, sizeof script, "%s/forward.py", dir);
    if (FILE* f = std::fopen(script, "w")) {
        std::fputs(kPython, f);
        std::fclose(f);
    }
    const char* python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    std::printf("%-9s %4s %6s %8s | %10s %10s %7s | %s\n", "subnet", "res", "batch", "threads", "ours img/s", "torch img/s", "ratio", "logit checksums");
    for (int res : {96, 160}) {
        for (auto [name, base] : {std::pair<const char*, SubnetConfig>{"largest", sampler.fullMaxConfig(res)}, {"smallest", sampler.minConfig(res)}}) {
            Subnet sub = net.extract(base);
            const std::string ckpt = std::string(dir) + "/subnet.pth", cfg = std::string(dir) + "/meta.json";
            sub.save(ckpt);
            std::string meta = "{\"blocks\": [";
            for (std::size_t i = 0; i < sub.weights().blocks.size(); ++i) {
                const BlockShape& b = sub.weights().blocks[i].shape;
                meta += (i ? "," : "") + std::string("{\"index\":") + std::to_string(b.index) + ",\"fused\":" + (b.fused ? "true" : "false") +
                        ",\"stride\":" + std::to_string(b.stride) + ",\"se\":" + (b.se_mid ? "true" : "false") +
                        ",\"residual\":" + (b.residual ? "true" : "false") + "}";
            }
            meta += "]}";
            if (FILE* f = std::fopen(cfg.c_str(), "w")) {
                std::fputs(meta.c_str(), f);
                std::fclose(f);
            }
            sub.setFolded(true);
            for (auto [batch, threads] : {std::pair<int, int>{1, 1}, {32, 2}}) {
                setTorchThreads(threads);
                at::Generator g = at::detail::createCPUGenerator(0);
                at::Tensor x = at::randn({batch, 3, res, res}, g);
                at::Tensor out = sub.forward(x);
                double best = 1e9;
                for (int r = 0; r < reps; ++r) {
                    auto t0 = std::chrono::steady_clock::now();
                    sub.forward(x);
                    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
                }
                const double ours = batch / best;
                double theirs = -1, sum = 0;
                const std::string cmd = std::string(python) + " " + script + " " + ckpt + " " + cfg + " " + std::to_string(res) + " " +
                                        std::to_string(batch) + " " + std::to_string(threads) + " " + std::to_string(reps) + " 2>/dev/null";
                if (FILE* p = popen(cmd.c_str(), "r")) {
                    if (std::fscanf(p, "%lf %lf", &theirs, &sum) != 2) theirs = -1;
                    pclose(p);
                }
                if (theirs > 0)
                    std::printf("%-9s %4d %6d %8d | %10.1f %10.1f %6.2fx | %.4f vs %.4f\n", name, res, batch, threads, ours, theirs,
                                ours / theirs, out.to(at::kDouble).sum().item<double>(), sum);
                else
                    std::printf("%-9s %4d %6d %8d | %10.1f %10s %7s | python3-torch not available\n", name, res, batch, threads, ours, "-", "-");
                std::fflush(stdout);
            }
        }
    }
    return 0;
}
