#include "cli/ConfigFiles.h"

#include "Error.h"
#include "space/ArchSampler.h"

namespace tinyscope::cli {

std::vector<SubnetConfig> readConfigs(const std::string& path, const DesignSpace& space)
{
    Json j = readJsonFile(path);
    std::vector<SubnetConfig> out;
    if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            out.push_back(SubnetConfig::fromJson(j[i], space, path + ": [" + std::to_string(i) + "]"));
        if (out.empty()) throw InputError(path + ": the array holds no subnet configs");
    } else {
        out.push_back(SubnetConfig::fromJson(j, space, path));
    }
    return out;
}

void appendRandomConfigs(const CliArgs& a, const DesignSpace& space, std::vector<SubnetConfig>& out)
{
    if (!a.has("random")) {
        if (a.has("seed")) throw InputError("--seed only applies to --random N");
        return;
    }
    const int n = a.intValue("random", 0, 1, 10'000'000);
    ArchSampler sampler(space);
    PyRandom rng(static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed)));
    for (int i = 0; i < n; ++i) out.push_back(sampler.random(rng));
}

}  // namespace tinyscope::cli
