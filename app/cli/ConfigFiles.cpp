#include "cli/ConfigFiles.h"

#include "Error.h"

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

}  // namespace tinyscope::cli
