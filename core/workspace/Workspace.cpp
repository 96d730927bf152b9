#include "workspace/Workspace.h"

#include "Error.h"
#include "predict/PredictorCard.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

namespace tinyscope {

namespace {

struct ShippedEntry {
    const char* name;
    const char* title;
    const char* space;
    const char* data;         // evaluation data when the data ships with Debian
    const char* calib_data;
    const char* train_data;   // the training split calib_data is held out of
    ImageColour colour;       // of the task's images (the calibration rule, CalibrationData.h)
    double million_macs;      // the search's starting limits
    double peak_kb;
};

// The Fashion-MNIST workspace is first: everything in it can be measured on this machine
// (shipped supernet, Debian's dataset-fashion-mnist). Lab 3's VWW space ships its predictor but no
// supernet and no images (the VWW dataset is not packaged), so it costs, predicts and searches.
// Search limits: Lab 3's 60 M MACs / 250 KB; for the Fashion-MNIST space (0.87–26.5 M MACs,
// 6.1–38 KB peak at 28–36 px) 10 M MACs / 20 KB, which rules out its larger half.
// The TinyEngine-trainable Fashion-MNIST space (issue 46: no squeeze-excite, 8×8 / 4×4 maps in the
// last stages) has its own supernet and predictor; 6.8–111 M MACs, 16–78 KB peak at 28–32 px, so
// its starting limits are 30 M MACs / 40 KB.
const ShippedEntry kShipped[] = {
    {"fashion-mnist", "Fashion-MNIST", "mcunet-fmnist", "fashion-mnist:test", "fashion-mnist:holdout", "fashion-mnist:fit", ImageColour::Grey, 10, 20},
    {"fashion-mnist-te", "Fashion-MNIST · TinyEngine-trainable", "mcunet-fmnist-te", "fashion-mnist:test", "fashion-mnist:holdout", "fashion-mnist:fit", ImageColour::Grey, 30, 40},
    {"lab3-vww", "Lab 3 · Visual Wake Words", "mcunet-vww", "", "", "", ImageColour::Colour, 60, 250},
};

Workspace fromEntry(const ShippedEntry& e)
{
    Workspace w;
    w.name = e.name;
    w.title = e.title;
    w.space = presetSpace(e.space);
    w.space_source = e.space;
    w.supernet = shippedSupernetPath(e.space);
    w.predictor = shippedPredictorPath(e.space);
    w.data = e.data;
    w.calib_data = e.calib_data;
    w.train_data = e.train_data;
    w.image_colour = e.colour;
    w.search_limits = {{"millionMACs", e.million_macs}, {"KBPeakMemory", e.peak_kb}};
    return w;
}

}  // namespace

std::string Workspace::evaluationBlocker() const
{
    if (supernet.empty())
        return "no supernet of space " + space.name + " is loaded" +
               (name == "lab3-vww" ? " (none ships for Lab 3's VWW space, and its images are not packaged)" : "");
    if (data.empty()) return "no evaluation data is chosen for space " + space.name;
    return "";
}

std::vector<std::string> shippedWorkspaceNames()
{
    std::vector<std::string> names;
    for (const ShippedEntry& e : kShipped) names.push_back(e.name);
    return names;
}

Workspace shippedWorkspace(const std::string& name)
{
    std::string known;
    for (const ShippedEntry& e : kShipped) {
        if (name == e.name) return fromEntry(e);
        known += std::string(known.empty() ? "" : ", ") + e.name;
    }
    throw InputError("unknown workspace '" + name + "' (shipped: " + known + ")");
}

Workspace workspaceForSpace(const DesignSpace& space, const std::string& source)
{
    for (const ShippedEntry& e : kShipped) {
        if (space.name != e.space) continue;
        Workspace w = fromEntry(e);
        // A space file that reuses a preset's name but changes its structure is another space.
        if (spaceFingerprint(w.space) != spaceFingerprint(space)) break;
        w.space = space;
        w.space_source = source;
        return w;
    }
    Workspace w;
    w.name = space.name;
    w.title = space.name;
    w.space = space;
    w.space_source = source;
    return w;
}

Workspace withSupernet(Workspace w, const std::string& checkpoint)
{
    const std::string cardSpace = supernetCardSpace(checkpoint);
    if (!cardSpace.empty() && cardSpace != w.space.name)
        throw InputError("the checkpoint " + checkpoint + " belongs to space " + cardSpace + " (its card says so), not to " +
                         w.space.name);
    w.supernet = checkpoint;
    return w;
}

Workspace workspaceForCheckpoint(const std::string& checkpoint, const Workspace& current)
{
    const std::string cardSpace = supernetCardSpace(checkpoint);
    Workspace w = cardSpace.empty() || cardSpace == current.space.name
                      ? current
                      : workspaceForSpace(presetSpace(cardSpace), cardSpace);   // throws for a space that is no preset
    w.supernet = checkpoint;   // its card agrees with w's space (read once, above)
    return w;
}

SupernetTarget supernetTarget(const Workspace& w)
{
    SupernetTarget t;
    if (w.hasSupernet()) {
        t.supernet = w.supernet;
        t.space = w.space;
        return t;
    }
    const Workspace fallback = shippedWorkspace(shippedWorkspaceNames().front());
    if (!fallback.hasSupernet())
        throw InputError("workspace " + w.title + " has no supernet, and the shipped one (models/supernets/" + fallback.space.name +
                         ".pth) was not found");
    t.supernet = fallback.supernet;
    t.space = fallback.space;
    t.transferred = fallback.space.name != w.space.name;
    return t;
}

}  // namespace tinyscope
