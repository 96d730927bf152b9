#pragma once
// Plain (torch-free) types of the evaluator's options and results, so the GUI and the CLI can hold
// them without including LibTorch.
#include "nn/measure/EvalEngine.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

struct CalibrationOptions {
    std::size_t images = 2000;   // holdout images used (drawn without replacement, seeded)
    int batch = 100;
    int resolution = 0;          // 0: the subnet's own image_size
    std::uint64_t seed = 0;
    // What runs the forward passes: oneDNN (the default; OneDnnCalibration, docs/ONEDNN.md "BN
    // re-calibration") or LibTorch's BnMode::Calibrate forward (the reference). oneDNN falls back to
    // LibTorch, with a note, where it refuses the subnet or the resolution is not the subnet's own.
    EvalEngine engine = EvalEngine::OneDnn;
    // The lab's calib_bn call swaps its arguments: it calibrates at 128x128 with batch size equal
    // to the image size. This reproduces that; the default is the intended behaviour.
    static CalibrationOptions labCompatible(int imageSize)
    {
        CalibrationOptions o;
        o.resolution = 128;
        o.batch = imageSize;
        return o;
    }
};

// What a BN re-calibration did: images used, the engine that ran it ("onednn" or "libtorch") and,
// where oneDNN was asked for and not used, why.
struct CalibrationReport {
    std::size_t images = 0;
    std::string engine, note;
};

struct EvalResult {
    std::size_t images = 0, correct = 0;
    double top1 = 0;                 // percent
    std::string data_source;         // the dataset measured, as it names itself (runEvaluation sets it)
    double seconds = 0, images_per_second = 0;
    std::size_t skipped = 0;
    std::vector<std::pair<std::string, std::string>> skipped_examples;   // first few (item, reason)
    std::size_t calibration_images = 0;
    std::string calibration_engine, calibration_note;   // CalibrationReport's; empty without re-calibration
    void setCalibration(const CalibrationReport& c)
    {
        calibration_images = c.images;
        calibration_engine = c.engine;
        calibration_note = c.note;
    }
    // Per class (index = label): images and correct ones; confusion[true * classes + predicted].
    int classes = 0;
    std::vector<std::size_t> class_images, class_correct, confusion;
    // What measured it (EvalEngine): "onednn" or "libtorch" ("onednn+libtorch" if oneDNN refused a
    // later batch's size), the data type and oneDNN's instruction set (LibTorch's convs run on
    // oneDNN too); engine_note says why oneDNN was not used when it was asked for.
    std::string engine = "libtorch", dtype = "fp32", isa, engine_note;

    double classTop1(int c) const   // percent; 0 for a class with no image
    {
        const std::size_t n = class_images[static_cast<std::size_t>(c)];
        return n ? 100.0 * static_cast<double>(class_correct[static_cast<std::size_t>(c)]) / static_cast<double>(n) : 0.0;
    }
};

// The name of class `c` (its index when the space names fewer classes).
inline std::string className(const std::vector<std::string>& names, int c)
{
    const auto i = static_cast<std::size_t>(c);
    return i < names.size() ? names[i] : std::to_string(c);
}

struct ClassScore {
    int index;
    std::string name;
    double probability;
};

}  // namespace tinyscope
