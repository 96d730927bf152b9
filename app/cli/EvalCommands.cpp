// tinyscope forward | eval | classify  (the supernet evaluator)
#include "cli/Cli.h"
#include "cli/CliArgs.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "nn/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <cstring>
#include <iostream>

namespace tinyscope::cli {

namespace {

int cmdForward(const Args& argv)
{
    CliArgs a(argv, {"supernet", "config", "input", "space", "threads"}, {"json", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope forward --supernet CKPT --config CFG.json --input FILE [--space NAME|FILE] [--json]\n"
                     "  runs the extracted subnet (eval mode, no BN re-calibration) on FILE, a raw little-endian\n"
                     "  float32 NCHW tensor of shape 1x3xRxR (R = the config's image_size), and prints the logits\n";
        return 0;
    }
    for (const char* req : {"supernet", "config", "input"})
        if (!a.has(req)) throw InputError(std::string("--") + req + " is required");
    setTorchThreads(a.intValue("threads", 1));
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    SubnetConfig config = SubnetConfig::loadFile(a.value("config"), space);
    const std::string path = a.value("input");
    std::string raw = readFileBytes(path);
    const std::int64_t r = config.image_size;
    const std::size_t want = static_cast<std::size_t>(3 * r * r) * sizeof(float);
    if (raw.size() != want)
        throw InputError(path + ": holds " + std::to_string(raw.size()) + " bytes; a 1x3x" + std::to_string(r) + "x" +
                         std::to_string(r) + " float32 tensor needs " + std::to_string(want));
    at::Tensor x = at::empty({1, 3, r, r}, at::kFloat);
    std::memcpy(x.data_ptr<float>(), raw.data(), want);

    Supernet supernet = Supernet::load(space, a.value("supernet"));
    Subnet subnet = supernet.extract(config);
    at::Tensor logits = subnet.forward(x).contiguous();
    std::vector<double> out(static_cast<std::size_t>(logits.numel()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = logits.data_ptr<float>()[i];
    if (a.flag("json")) {
        std::cout << Json{{"logits", out}}.dump() << "\n";
    } else {
        for (double v : out) std::cout << v << "\n";
    }
    return 0;
}

}  // namespace

std::vector<Command> evalCommands()
{
    return {
        {"forward", "run an extracted subnet on a raw float32 input tensor", cmdForward},
    };
}

}  // namespace tinyscope::cli
