// What the teacher-logit cache saves: the frozen teacher (largest subnet of a supernet, 36 px,
// eval mode with folded BN) run inside every training step at batch 64, against computing it once
// per (draw, image) at batch 256 and reading soft targets back from the cache. Prints microseconds
// per image for each; docs/SUPERNET_TRAINING.md multiplies them by a recipe's image counts.
//   bench_teacher_cache [SUPERNET.pth]   (default: the shipped models/supernets/mcunet-fmnist.pth)
#include "BenchTiming.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "data/TeacherLogitCache.h"
#include "nn/measure/Evaluator.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <numeric>
#include <string>

using namespace tinyscope;

int main(int argc, char** argv)
{
    configureAllocator();
    tinyscope::bench::printMachine();
    setTorchThreads(2);
    const std::string path = argc > 1 ? argv[1] : std::string(TINYSCOPE_SOURCE_DIR) + "/models/supernets/mcunet-fmnist.pth";
    const DesignSpace space = presetSpace("mcunet-fmnist");
    const Supernet net = Supernet::load(space, path);
    const int res = *std::max_element(space.resolutions.begin(), space.resolutions.end());
    Subnet teacher = net.extract(ArchSampler(space).fullMaxConfig(res));
    const auto hold = openDataset("fashion-mnist:holdout");
    const auto fit = openDataset("fashion-mnist:fit");
    CalibrationOptions co;
    co.images = 500;
    calibrateBn(teacher, *hold, co);
    teacher.setFolded(true);
    at::NoGradGuard guard;

    auto batchOf = [&](std::size_t from, std::size_t n) {
        std::vector<std::size_t> items(n);
        std::iota(items.begin(), items.end(), from);
        return loadBatch(*fit, items, res);
    };
    auto forward = [&](Batch& b) {
        return at::softmax(teacher.forward(batchImages(b)), 1).contiguous();
    };
    // In the step: the 36-px batch is loaded for the largest student anyway; only the forward counts.
    std::vector<Batch> small;
    for (int i = 0; i < 8; ++i) small.push_back(batchOf(static_cast<std::size_t>(i) * 64, 64));
    const double inStep = bench::timeUs(8, [&](int i) { forward(small[static_cast<std::size_t>(i)]); }, 3) / 64;
    // Building the cache: load (with the 36-px resize) and forward 256 images, keep the top-5.
    TeacherLogitCache cache(space.n_classes, 5, fit->size(), 1);
    const double build = bench::timeUs(4, [&](int i) {
        Batch b = batchOf(static_cast<std::size_t>(i) * 256, 256);
        at::Tensor p = forward(b);
        for (std::size_t row = 0; row < b.size(); ++row)
            cache.put(0, b.items[row], p.data_ptr<float>() + row * static_cast<std::size_t>(space.n_classes));
    }, 3) / 256;
    std::vector<std::size_t> rows(64);
    std::iota(rows.begin(), rows.end(), 0);
    const double lookup = bench::timeUs(200, [&](int) {
        const std::vector<float> t = cache.targets(0, rows);
        at::Tensor x = at::from_blob(const_cast<float*>(t.data()), {64, space.n_classes}, at::kFloat).clone();
    }) / 64;
    std::printf("teacher in the step (batch 64, forward only):  %8.1f us/image\n", inStep);
    std::printf("cache build (batch 256, load + forward + top-5): %8.1f us/image  (%.2fx the in-step cost)\n", build, build / inStep);
    std::printf("cache lookup (64 soft targets):                %8.2f us/image\n", lookup);
    std::printf("break-even: the cache pays off when each cached (draw, image) is read %.2f times or more\n",
                build / (inStep - lookup));
    return 0;
}
