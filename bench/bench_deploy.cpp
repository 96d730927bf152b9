// Deploy speed (issue 18, docs/BENCHMARKS.md "Deploy"): for one subnet (default: the max subnet of the
// shipped demo supernet at its resolution) the time `deployModel` takes to write float ONNX and int8
// TFLite (BN re-calibration and int8 calibration included), then the int8 inference time of the same
// TFLite model in TensorFlow Lite Micro on the host (tflm_run, its own invoke timer) beside our
// Int8Forward in TFLM's arithmetic, in the same run on the same random images; the outputs must agree.
//   bench_deploy [SUPERNET.pth] [CONFIG|max|min] [IMAGES] [SPACE] [CALIB_DATA]
// CALIB_DATA: images of the space's task (default: the space's own; workspace/CalibrationData.h).
// e.g. the MCUNet-VWW space's largest subnet at 160 (the space ships no images: a folder of VWW ones):
//   bench_deploy ../shared/reference/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth max 10 mcunet-vww VWW_FOLDER
#include "BenchTiming.h"

#include "Error.h"
#include "deploy/TfliteExport.h"
#include "deploy/TflmRunner.h"
#include "graph/ForwardLowering.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/quantize/DeployJob.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/TorchRuntime.h"
#include "tinyengine/Int8Forward.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace tinyscope;

namespace {

double secondsOf(const std::function<void()>& f)
{
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv)
try {
    configureAllocator();
    setTorchThreads(2);
    bench::printMachine();
    const std::string supernet = argc > 1 ? argv[1] : dataRoot() + "/models/supernets/mcunet-fmnist.pth";
    const std::string config = argc > 2 ? argv[2] : "max";
    const int images = argc > 3 ? std::max(1, std::atoi(argv[3])) : 50;
    const std::string space = argc > 4 ? argv[4] : "mcunet-fmnist";
    const std::string tmp = "/tmp/bench_deploy_" + std::to_string(::getpid());
    std::filesystem::create_directories(tmp);

    DeployRequest rq;
    rq.model = ModelSource::subnetByName(space, config, supernet);
    rq.quantize.calib_images = 100;
    rq.quantize.calib_data = argc > 5 ? argv[5] : "";
    rq.format = DeployFormat::Onnx;
    rq.out = tmp + "/model.onnx";
    DeployResult onnx, tfl;
    const double onnxS = secondsOf([&] { onnx = deployModel(rq); });
    rq.format = DeployFormat::TFLite;
    rq.out = tmp + "/model.tflite";
    const double tfliteS = secondsOf([&] { tfl = deployModel(rq); });
    std::printf("subnet %s of %s, input %s\n", config.c_str(), supernet.c_str(), tfl.input.toJson()["shape"].dump().c_str());
    std::printf("deploy (BN re-calibration on %zu images + writer): onnx %.2f s (%llu B), tflite %.2f s incl. int8 calibration on 100 images (%llu B)\n",
                rq.quantize.bn_images, onnxS, static_cast<unsigned long long>(onnx.bytes), tfliteS, static_cast<unsigned long long>(tfl.bytes));

    // The same int8 model in memory for Int8Forward (TFLM's arithmetic with the file's scales).
    const PreparedModel m = prepareModel(rq.model, rq.quantize);
    const TfliteModel built = buildTflite(m.network, m.params);
    const TrainingGraph g = lowerForward(m.network);
    const Int8Forward ours(g, m.params, Int8Arithmetic::Tflite, &built.effective_scales);
    const Shape3 in = m.network.input;
    std::mt19937 rng(1);
    std::vector<std::vector<std::int8_t>> chw(static_cast<std::size_t>(images));
    std::vector<std::int8_t> nhwc;
    for (auto& img : chw) {
        img.resize(static_cast<std::size_t>(in.elems()));
        for (auto& b : img) b = static_cast<std::int8_t>(rng() & 0xff);
        for (int y = 0; y < in.h; ++y)
            for (int x = 0; x < in.w; ++x)
                for (int c = 0; c < in.c; ++c) nhwc.push_back(static_cast<std::int8_t>(img[(static_cast<std::size_t>(c) * in.h + y) * in.w + x]));
    }
    writeFileAtomic(tmp + "/in.tflite", built.bytes);
    std::vector<std::vector<std::int8_t>> mine(chw.size());
    const double oursUs = bench::timeUs(images, [&](int i) { mine[static_cast<std::size_t>(i)] = ours.run(chw[static_cast<std::size_t>(i)]); }, 3);
    if (!tflmRunMissing().empty()) {
        std::printf("int8 inference per image: Int8Forward %.0f us; %s\n", oursUs, tflmRunMissing().c_str());
    } else {
        const TflmRunReport t = runTflm(tmp + "/in.tflite", nhwc, images, 64 << 20);
        int equal = 0;
        for (int i = 0; i < images; ++i) {
            const auto& mineI = mine[static_cast<std::size_t>(i)];
            equal += t.outputs[static_cast<std::size_t>(i)] == std::vector<double>(mineI.begin(), mineI.end());
        }
        const double tflmUs = bench::median(t.invoke_us);
        std::printf("int8 inference per image (%d random images): TFLM (reference kernels, host) %.0f us median, Int8Forward (TFLite arithmetic) %.0f us best-of-3 mean: ratio TFLM/ours %.2f; outputs equal on %d of %d; TFLM arena_used_bytes %lld\n",
                    images, tflmUs, oursUs, tflmUs / oursUs, equal, images, static_cast<long long>(t.arena_used_bytes));
    }
    std::filesystem::remove_all(tmp);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_deploy: %s\n", e.what());
    return 2;
}
