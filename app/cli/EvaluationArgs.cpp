#include "cli/EvaluationArgs.h"

#include "Error.h"
#include "cli/Cli.h"
#include "io/DataPaths.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

namespace tinyscope::cli {

const std::set<std::string> kEvaluationValued{"supernet", "space", "config", "data", "calib-data", "calib-images", "calib-batch", "images", "split",
                                              "batch", "threads", "resolution", "seed", "engine", "dtype", "int8-calib-images"};
const std::set<std::string> kEvaluationFlags{"json", "help", "no-calib", "lab-calib"};

SupernetChoice chooseSupernet(const CliArgs& a)
{
    if (a.has("supernet")) return {loadSpace(a.value("space", defaultSpaceName())), a.value("supernet")};
    const std::string shipped = findModelFile("supernets/mcunet-fmnist.pth");
    if (shipped.empty())
        throw InputError("no --supernet given and the shipped demo supernet (models/supernets/mcunet-fmnist.pth) was not found");
    return {loadSpace(a.value("space", defaultSpaceName())), shipped};
}

SubnetConfig chooseConfig(const CliArgs& a, const DesignSpace& space)
{
    SubnetConfig c = configByName(space, a.value("config", "max"));
    if (a.has("resolution")) {
        c.image_size = a.intValue("resolution", 0, 1, 1 << 20);
        c.validate(space, "--resolution");
    }
    return c;
}

EvaluationRequest evaluationFromArgs(const CliArgs& a)
{
    const EvalEngine engine = parseEvalEngine(a.value("engine", "onednn"), "--engine");
    bool int8 = false;
    const EvalDtype dtype = parseMeasuredDtype(a.value("dtype", "fp32"), "--dtype", engine, int8);
    requireEvalDtype(engine, dtype);
    if (!int8 && a.has("int8-calib-images")) throw InputError("--int8-calib-images applies to --dtype int8 only");
    const long long int8CalibImages = a.int64Value("int8-calib-images", 200, 1, kMaxImages);
    // Every number first, so that a bad one is refused before anything is loaded.
    const int threadsWanted = a.intValue("threads", defaultBatchThreads(), 1, kMaxThreads);
    const int split = a.intValue("split", -1, 0, 1);
    const long long images = a.int64Value("images", 0, 1, kMaxImages);   // 0: not given (all)
    const int batch = a.intValue("batch", 100, 1, kMaxBatch);
    const long long calibImages = a.int64Value("calib-images", 0, 1, kMaxImages);
    const int calibBatch = a.intValue("calib-batch", 0, 1, kMaxBatch);
    const std::uint64_t seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    // The request the GUI's evaluation box builds, run by the same core job (nn/accuracy/EvaluationJob).
    const SupernetChoice sc = chooseSupernet(a);
    EvaluationRequest rq;
    rq.supernet = sc.path;
    rq.space = sc.space;
    rq.config = chooseConfig(a, sc.space);
    rq.data = a.value("data", "fashion-mnist:test");
    rq.images = static_cast<std::size_t>(images);
    rq.split = split;
    rq.calibrate = !a.flag("no-calib");
    rq.calib_data = a.value("calib-data");
    rq.calib_words = {"--calib-data DATASET", "--no-calib"};
    rq.calibration = a.flag("lab-calib") ? CalibrationOptions::labCompatible(rq.config.image_size) : CalibrationOptions{};
    if (calibImages > 0) rq.calibration.images = static_cast<std::size_t>(calibImages);
    if (calibBatch > 0) rq.calibration.batch = calibBatch;
    rq.calibration.seed = seed;
    rq.threads = threadsWanted;
    rq.batch = batch;
    rq.engine = engine;
    rq.dtype = dtype;
    rq.int8 = int8;
    rq.int8_calib_images = static_cast<std::size_t>(int8CalibImages);
    return rq;
}

}  // namespace tinyscope::cli
