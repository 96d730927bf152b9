#include "cli/ModelArgs.h"

#include "Error.h"
#include "cli/Cli.h"

namespace tinyscope::cli {

ModelSpec modelFromArgs(const CliArgs& a)
{
    ModelSpec m;
    m.zoo = a.value("model");
    m.params = a.value("params");
    m.scales = a.value("scales");
    m.supernet = a.value("supernet");
    m.config = a.value("config");
    m.space = a.value("space");
    m.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    if (m.zoo.empty() && m.supernet.empty()) throw InputError("give the model: --model NAME or --supernet CKPT --config CFG");
    if (!m.params.empty() && m.zoo.empty()) throw InputError("--params gives the int8 weights of a zoo model: add --model NAME");
    if (!m.config.empty() && m.supernet.empty()) throw InputError("--config needs --supernet CKPT");
    return m;
}

QuantizeOptions quantizeFromArgs(const CliArgs& a)
{
    QuantizeOptions o;
    o.calib_data = a.value("calib-data", o.calib_data);
    o.calib_images = static_cast<std::size_t>(a.int64Value("calib-images", static_cast<long long>(o.calib_images), 1, kMaxImages));
    o.bn_images = static_cast<std::size_t>(a.int64Value("bn-images", static_cast<long long>(o.bn_images), 1, kMaxImages));
    o.threads = a.intValue("threads", 2, 1, kMaxThreads);
    return o;
}

}  // namespace tinyscope::cli
