#include "workspace/CalibrationData.h"

#include "Error.h"
#include "io/OutputPaths.h"
#include "workspace/Workspace.h"

#include <algorithm>
#include <cstdlib>

namespace tinyscope {

namespace {

Workspace workspaceOf(const DesignSpace& space) { return workspaceForSpace(space, space.name); }

int smallestResolution(const DesignSpace& space)
{
    return space.resolutions.empty() ? 0 : *std::min_element(space.resolutions.begin(), space.resolutions.end());
}

// Half the smallest input size, rounded up: the least shorter side the task's images have.
int leastSide(const DesignSpace& space) { return (smallestResolution(space) + 1) / 2; }

std::string classList(const DesignSpace& space)
{
    const std::vector<std::string>& names = space.class_names;
    if (names.empty() || static_cast<int>(names.size()) != space.n_classes) return "";
    if (names.size() > 5) return names[0] + ", " + names[1] + ", " + names[2] + ", …, " + names.back();   // the first three, the last
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
}

// Grey content: at most 1 % of the pixels have channels more than 16 apart (JPEG noise on grey
// saved as RGB stays grey).
bool isColour(const Image& im)
{
    if (im.channels < 3) return false;
    const std::size_t pixels = static_cast<std::size_t>(im.width) * static_cast<std::size_t>(im.height);
    std::size_t coloured = 0;
    for (std::size_t p = 0; p < pixels; ++p) {
        const std::uint8_t* v = &im.pixels[p * static_cast<std::size_t>(im.channels)];
        const int mx = std::max({v[0], v[1], v[2]}), mn = std::min({v[0], v[1], v[2]});
        coloured += mx - mn > 16;
    }
    return coloured * 100 > pixels;
}

const char* colourName(ImageColour c) { return c == ImageColour::Grey ? "grey" : "colour"; }

std::string waysOut(const DesignSpace& space, bool keepWouldDo, const CalibrationWords& words)
{
    std::string s = "give images of its task (" + calibrationExpectation(space) + ")";
    if (!words.data.empty()) s += " with " + words.data;
    if (keepWouldDo) {
        s += ", or keep the checkpoint's BatchNorm statistics";
        if (!words.keep.empty()) s += " with " + words.keep;
    } else {
        s += "; int8 quantization calibrates its activation ranges on them";
    }
    return s;
}

}  // namespace

std::string ownCalibrationData(const DesignSpace& space) { return workspaceOf(space).calib_data; }

std::string calibrationExpectation(const DesignSpace& space)
{
    const std::string names = classList(space);
    std::string s = std::to_string(space.n_classes) + " classes" + (names.empty() ? "" : ": " + names);
    const ImageColour colour = workspaceOf(space).image_colour;
    if (colour != ImageColour::Unknown) s += std::string("; ") + colourName(colour);
    if (leastSide(space) > 1) s += "; at least " + std::to_string(leastSide(space)) + " px a side";
    return s;
}

std::string chooseCalibrationData(const DesignSpace& space, const std::string& given, bool keepWouldDo, const CalibrationWords& words)
{
    if (!given.empty()) return given;
    const Workspace w = workspaceOf(space);
    if (!w.calib_data.empty()) return w.calib_data;
    const bool shipped = w.name != space.name || w.title != space.name;   // a bare workspace is named after its space
    throw InputError("space " + space.name + " has no calibration images of its own (" +
                     (shipped ? "workspace " + w.title + " ships none" : std::string("no shipped workspace has this space")) + "): " +
                     waysOut(space, keepWouldDo, words));
}

std::string calibrationMismatch(const DesignSpace& space, const ImageDataset& data)
{
    const std::size_t classes = data.classNames().size();
    if (static_cast<int>(classes) != space.n_classes) {
        const std::string names = classList(space);
        return "it has " + std::to_string(classes) + " classes, the task " + std::to_string(space.n_classes) +
               (names.empty() ? "" : " (" + names + ")");
    }
    const std::size_t n = data.size();
    if (n == 0) return "it holds no images";
    const std::size_t samples = std::min(n, kCalibrationSamples);
    std::size_t read = 0, colour = 0;
    int longestShortSide = 0;
    std::string colourItem, error;
    for (std::size_t k = 0; k < samples; ++k) {
        const std::size_t i = k * n / samples;
        Image im;
        try {
            im = data.image(i);
        } catch (const InputError& e) {
            if (error.empty()) error = e.what();
            continue;
        }
        ++read;
        longestShortSide = std::max(longestShortSide, std::min(im.width, im.height));
        if (isColour(im)) {
            ++colour;
            if (colourItem.empty()) colourItem = pathForMessage(data.itemName(i));
        }
    }
    if (read == 0) return "none of its " + std::to_string(samples) + " sampled images can be read (" + error + ")";
    if (longestShortSide < leastSide(space))
        return "its images are " + std::to_string(longestShortSide) + " px on the shorter side (the largest of " + std::to_string(read) +
               " sampled), under half the space's smallest input of " + std::to_string(smallestResolution(space)) + " px";
    const ImageColour task = workspaceOf(space).image_colour;
    if (task == ImageColour::Grey && colour > 0) return "it holds colour images (" + colourItem + "), the task's are grey";
    if (task == ImageColour::Colour && colour == 0)
        return "its images are grey (all " + std::to_string(read) + " sampled), the task's are colour";
    return "";
}

std::unique_ptr<ImageDataset> openCalibrationData(const DesignSpace& space, const std::string& given, bool keepWouldDo,
                                                  const CalibrationWords& words)
{
    const std::string spec = chooseCalibrationData(space, given, keepWouldDo, words);
    std::unique_ptr<ImageDataset> data = openDataset(spec);
    const std::string why = calibrationMismatch(space, *data);
    if (!why.empty())
        throw InputError("calibration data " + pathForMessage(spec) + " is not of space " + space.name + "'s task: " + why + "; " +
                         waysOut(space, keepWouldDo, words));
    return data;
}

std::unique_ptr<ImageDataset> openTrainingData(const DesignSpace& space, const std::string& given, const std::string& option)
{
    const std::string spec = given.empty() ? workspaceOf(space).train_data : given;
    const std::string where = option.empty() ? "" : " with " + option;
    if (spec.empty())
        throw InputError("space " + space.name + " has no training data here; give images of its task (" + calibrationExpectation(space) + ")" + where);
    std::unique_ptr<ImageDataset> data = openDataset(spec);
    const std::string why = calibrationMismatch(space, *data);
    if (!why.empty())
        throw InputError("training data " + pathForMessage(spec) + " is not of space " + space.name + "'s task: " + why +
                         "; give images of its task (" + calibrationExpectation(space) + ")" + where);
    return data;
}

}  // namespace tinyscope
