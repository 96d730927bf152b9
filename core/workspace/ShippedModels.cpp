#include "workspace/ShippedModels.h"

#include "space/SpacePresets.h"

#include "io/DataPaths.h"
#include "io/JsonFile.h"

namespace tinyscope {

std::string shippedSupernetPath(const std::string& spaceName) { return findModelFile("supernets/" + spaceName + ".pth"); }
std::string shippedSupernetPath() { return shippedSupernetPath(defaultSpaceName()); }

std::string shippedPredictorPath(const std::string& spaceName) { return findModelFile("predictors/" + spaceName + ".bin"); }

std::string supernetCardSpace(const std::string& checkpoint)
{
    const std::string ext = ".pth";
    if (checkpoint.size() <= ext.size() || checkpoint.compare(checkpoint.size() - ext.size(), ext.size(), ext) != 0) return "";
    const std::string card = checkpoint.substr(0, checkpoint.size() - ext.size()) + ".json";
    if (!fileExists(card)) return "";
    try {
        const Json j = readJsonFile(card);
        return j.is_object() && j.contains("space") && j["space"].is_string() ? j["space"].get<std::string>() : "";
    } catch (const std::exception&) {
        return "";   // not a card: no opinion on the space
    }
}

}  // namespace tinyscope
