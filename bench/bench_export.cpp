// TinyEngine export and int8 forward speed on mcunet-5fps (real int8 weights of
// full-int8-params.pkl, 128x128):
//  * the whole export (graph build for the 49kb scheme, identity slices, checker, JSON text,
//    params pickle, scale.json, three atomic writes), against the baseline of building the
//    training graph alone (what train-graph does) — ratio = export / graph build;
//  * one image through the C++ int8 forward, against the float forward of the dequantized model
//    in LibTorch (1 thread, batch 1 and batch 32 per image), in the same run.
// Usage: bench_export SHARED_REFERENCE_DIR [images]
#include "BenchTiming.h"
#include "graph/Autodiff.h"
#include "graph/ForwardLowering.h"
#include "graph/PublishedSchemes.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/TorchRuntime.h"
#include "tinyengine/Int8Forward.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/ZooCatalog.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

double bestMs(int reps, const std::function<void()>& f)
{
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    return best;
}

}  // namespace

int main(int argc, char** argv)
{
    tinyscope::bench::printMachine();
    const std::string ref = argc > 1 ? argv[1] : "../shared/reference/tinyengine";
    const int images = argc > 2 ? std::atoi(argv[2]) : 20;
    configureAllocator();
    setTorchThreads(1);
    QuantizedParams p = readParamsPickle(ref + "/full-int8-params.pkl");
    p.scales = readScaleJson(ref + "/scale.json");
    const Network net = zooModel("mcunet-5fps");
    const SparseScheme scheme = schemeByName("mcunet-5fps/49kb", nullptr);
    const std::string dir = (std::filesystem::temp_directory_path() / "tinyscope-bench-export").string();

    const double build = bestMs(5, [&] { buildTrainingGraph(net, scheme.resolve(net), AutodiffMode::Reference); });
    const double exportMs = bestMs(5, [&] {
        const ExportPlan plan = planExport(net, p, scheme, ExportForm::Reference, "49kb-int8");
        writeExport(plan, dir);
    });
    std::printf("export mcunet-5fps/49kb (plan + check + 3 files): %8.2f ms   graph build alone: %6.2f ms   ratio %.1fx\n", exportMs, build,
                exportMs / build);

    const TrainingGraph forward = lowerForward(net);
    const Int8Forward int8(forward, p);
    const FloatModel fm = dequantizedModel(net, p);
    std::vector<float> img(3 * 128 * 128);
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>(std::sin(0.013 * static_cast<double>(i)));
    const at::Tensor x1 = at::from_blob(img.data(), {1, 3, 128, 128}, at::kFloat).clone();
    const at::Tensor x32 = x1.expand({32, 3, 128, 128}).contiguous();
    floatForward(fm, x1);   // warm-up
    const double q = bestMs(3, [&] {
        for (int i = 0; i < images; ++i) int8.predict(img.data());
    }) / images;
    const double f1 = bestMs(3, [&] {
        for (int i = 0; i < images; ++i) floatForward(fm, x1);
    }) / images;
    const double f32 = bestMs(3, [&] { floatForward(fm, x32); }) / 32.0;
    std::printf("int8 forward (C++, 1 thread):           %8.2f ms/image\n", q);
    std::printf("float forward (LibTorch, 1 thread, b1): %8.2f ms/image   int8/float %.2fx\n", f1, q / f1);
    std::printf("float forward (LibTorch, 1 thread, b32):%8.2f ms/image   int8/float %.2fx\n", f32, q / f32);
    std::filesystem::remove_all(dir);
    return 0;
}
