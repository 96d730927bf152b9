#include "cli/ModelArgs.h"

#include "Error.h"
#include "cli/Cli.h"

namespace tinyscope::cli {

const char* const kModelOptions =
    "  --model NAME          a zoo model (tinyscope zoo list); its int8 weights from --params FILE\n"
    "                        (a TinyEngine params pickle; --scales FILE, default scale.json beside it),\n"
    "                        else PyTorch's default initialisation (--seed S), quantized here\n"
    "  --supernet CKPT --config CFG.json|max|min [--space NAME|FILE]\n"
    "                        or a subnet of a supernet checkpoint (space default mcunet-fmnist)\n"
    "  --subnet DIR          or a subnet saved on its own: the folder tinyscope prune --out wrote (pruned,\n"
    "                        fine-tuned; its space.json gives the space)\n"
    "  --calib-data DATASET  images of the int8 activation ranges and a subnet's BatchNorm re-calibration, of the\n"
    "                        space's task (its number of classes, colour, at least half its smallest input size).\n"
    "                        Default: the space's own (fashion-mnist:holdout for the Fashion-MNIST spaces; mcunet-vww has\n"
    "                        none: give it); a zoo model: fashion-mnist:holdout\n"
    "  --calib-images N      calibration images of the int8 activation ranges (default 200)\n"
    "  --bn-images N         a subnet's BatchNorm re-calibration images (default 2000; 0 keeps the checkpoint's statistics)\n"
    "  --threads N           worker threads (default 2)\n";


std::set<std::string> withModelOptions(std::set<std::string> more)
{
    more.insert({"model", "params", "scales", "seed", "supernet", "config", "space", "subnet", "calib-data", "calib-images", "bn-images", "threads"});
    return more;
}

ModelSource modelFromArgs(const CliArgs& a)
{
    const std::string zoo = a.value("model"), params = a.value("params"), supernet = a.value("supernet"), config = a.value("config");
    const std::uint64_t seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    if (const std::string folder = a.value("subnet"); !folder.empty()) {
        if (!zoo.empty() || !supernet.empty() || !config.empty())
            throw InputError("--subnet DIR is the whole model: not with --model, --supernet or --config");
        return ModelSource::subnetFolder(folder, a.value("space"));
    }
    if (zoo.empty() && supernet.empty()) throw InputError("give the model: --model NAME, --supernet CKPT --config CFG or --subnet DIR");
    if (!params.empty() && zoo.empty()) throw InputError("--params gives the int8 weights of a zoo model: add --model NAME");
    if (!config.empty() && supernet.empty()) throw InputError("--config needs --supernet CKPT");
    if (!supernet.empty()) {
        if (!zoo.empty()) throw InputError("give either a zoo model or --supernet/--config, not both");
        return ModelSource::subnetByName(a.value("space"), config.empty() ? "max" : config, supernet);
    }
    if (!params.empty()) return ModelSource::zooWithParams(zoo, params, a.value("scales"));
    return ModelSource::zoo(zoo, seed);
}

QuantizeOptions quantizeFromArgs(const CliArgs& a)
{
    QuantizeOptions o;
    o.calib_data = a.value("calib-data", "");   // "": the model's own (workspace/CalibrationData.h)
    o.calib_images = static_cast<std::size_t>(a.int64Value("calib-images", static_cast<long long>(o.calib_images), 1, kMaxImages));
    o.bn_images = static_cast<std::size_t>(a.int64Value("bn-images", static_cast<long long>(o.bn_images), 0, kMaxImages));
    o.words = {"--calib-data DATASET", "--bn-images 0"};
    o.threads = a.intValue("threads", 2, 1, kMaxThreads);
    return o;
}

}  // namespace tinyscope::cli
