#include "nn/accuracy/EvaluationJob.h"
#include "nn/accuracy/PreparedSubnet.h"

#include "Error.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/measure/Evaluator.h"
#include "nn/quantize/Int8Measurement.h"
#include "nn/TorchRuntime.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <sys/stat.h>

#include <memory>
#include <mutex>

namespace tinyscope {

namespace {

// The last loaded supernet, reused while its file is unchanged.
std::shared_ptr<const Supernet> cachedSupernet(const std::string& path, const DesignSpace& space)
{
    static std::mutex mu;
    static std::shared_ptr<const Supernet> net;
    static std::string key;
    struct stat st {};
    const std::string k = path + "|" + space.name + "|" +
                          (::stat(path.c_str(), &st) == 0 ? std::to_string(st.st_mtime) + ":" + std::to_string(st.st_size) : "");
    std::lock_guard<std::mutex> lock(mu);
    if (!net || key != k) {
        net = std::make_shared<const Supernet>(Supernet::load(space, path));
        key = k;
    }
    return net;
}

}  // namespace

std::unique_ptr<ImageDataset> evaluationCalibrationData(const EvaluationRequest& rq)
{
    if (!rq.calibrate && !rq.int8) return nullptr;
    return openCalibrationData(rq.space, rq.calib_data, !rq.int8, rq.calib_words);
}

EvaluationData evaluationData(const EvaluationRequest& rq)
{
    EvaluationData ed;
    ed.data = openDataset(rq.data);
    const ImageDataset& data = *ed.data;
    if (static_cast<int>(data.classNames().size()) != rq.space.n_classes)
        throw InputError(data.source() + " has " + std::to_string(data.classNames().size()) + " classes; space '" + rq.space.name + "' has " +
                         std::to_string(rq.space.n_classes));
    rq.config.validate(rq.space, "subnet");
    ed.items = splitIndices(data.size(), rq.split);
    if (rq.images > 0 && rq.images < ed.items.size()) ed.items.resize(rq.images);
    if (ed.items.empty()) throw InputError(data.source() + ": no images to evaluate (" + std::to_string(data.size()) + " in the dataset)");
    return ed;
}

Subnet preparedSubnet(const EvaluationRequest& rq, const ImageDataset* calib, const JobControl& job, CalibrationReport* calibrated)
{
    Subnet sub = cachedSupernet(rq.supernet, rq.space)->extract(rq.config);
    if (rq.calibrate) {
        CalibrationOptions co = rq.calibration;
        co.engine = rq.engine;   // --engine libtorch: the whole measurement on LibTorch
        calibrateBn(sub, *calib, co, job, calibrated);
    }
    sub.setFolded(true);
    return sub;
}

double measuredTop1(Subnet& sub, const EvaluationRequest& rq, const EvaluationData& ed, const JobControl& job)
{
    sub.setFolded(true);
    const double top1 = evaluateTop1(sub, *ed.data, ed.items, rq.batch, job, rq.engine, rq.dtype).top1;
    sub.setFolded(false);
    return top1;
}

EvalResult runEvaluation(const EvaluationRequest& rq, const JobControl& job)
{
    configureAllocator();
    const int threads = setTorchThreads(rq.threads);
    // Everything the user chose is checked before the supernet is loaded.
    const EvaluationData ed = evaluationData(rq);
    const std::unique_ptr<ImageDataset>& data = ed.data;
    const std::vector<std::size_t>& items = ed.items;
    const std::unique_ptr<ImageDataset> calib = evaluationCalibrationData(rq);
    CalibrationReport calibrated;
    Subnet sub = preparedSubnet(rq, calib.get(), job, &calibrated);
    EvalResult r;
    if (rq.int8) {
        r = measureInt8Result(rq.space, sub, *calib, rq.int8_calib_images, *data, items, threads, job);
    } else {
        r = evaluateTop1(sub, *data, items, rq.batch, job, rq.engine, rq.dtype);
    }
    r.setCalibration(calibrated);
    r.data_source = data->source();
    return r;
}

Classification runClassification(const EvaluationRequest& rq, const std::string& imagePath)
{
    configureAllocator();
    setTorchThreads(rq.threads);
    Image img = decodeImageFile(imagePath);
    rq.config.validate(rq.space, "subnet");
    EvaluationRequest bnOnly = rq;
    bnOnly.int8 = false;   // classification is the float forward
    Classification c;
    if (bnOnly.calibrate && bnOnly.calib_data.empty()) {
        const std::string own = ownCalibrationData(rq.space);
        const bool ownHere = !own.empty() && (own.rfind("fashion-mnist:", 0) != 0 || !fashionMnistDir().empty());
        if (!ownHere) {
            bnOnly.calibrate = false;
            c.calibration_note = "BatchNorm keeps the checkpoint's statistics: " +
                                 (own.empty() ? "space " + rq.space.name + " has no calibration images of its own" : own + " is not installed") + " (" +
                                 (rq.calib_words.data.empty() ? std::string("calibration data") : rq.calib_words.data) +
                                 " re-calibrates it on images of " + calibrationExpectation(rq.space) + ")";
        }
    }
    const std::unique_ptr<ImageDataset> calib = evaluationCalibrationData(bnOnly);
    Subnet sub = preparedSubnet(bnOnly, calib.get(), {}, nullptr);
    c.scores = classifyImage(sub, img, rq.space.class_names);
    return c;
}

EvaluationRequest supernetRequest(const std::string& checkpoint)
{
    EvaluationRequest rq;
    rq.supernet = checkpoint;
    const std::string cardSpace = supernetCardSpace(checkpoint);
    rq.space = presetSpace(spaceOrDefault(cardSpace));
    return rq;
}

EvaluationRequest supernetRequest(const SupernetTarget& target)
{
    EvaluationRequest rq;
    rq.supernet = target.supernet;
    rq.space = target.space;
    return rq;
}

EvaluationRequest shippedSupernetRequest()
{
    const std::string path = shippedSupernetPath();
    if (path.empty()) throw InputError("the shipped supernet (models/supernets/mcunet-fmnist.pth) was not found");
    return supernetRequest(path);
}

}  // namespace tinyscope
