#include "nn/quantize/QuantizationJob.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "graph/ForwardLowering.h"
#include "io/AtomicFile.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "nn/measure/Evaluator.h"
#include "nn/onednn/OneDnnInt8Accumulator.h"
#include "nn/onednn/OneDnnInt8Plan.h"
#include "nn/quantize/Int8Measurement.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/supernet/SubnetCheckpoint.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "nn/quantize/ZooModule.h"
#include "tinyengine/Int8Forward.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace tinyscope {

namespace {

bool exists(const std::string& p)
{
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
}

std::vector<std::size_t> firstItems(std::size_t n, std::size_t limit)
{
    std::vector<std::size_t> items(limit > 0 ? std::min(n, limit) : n);
    for (std::size_t i = 0; i < items.size(); ++i) items[i] = i;
    return items;
}

// A missing checkpoint is said before the calibration data is looked at.
void requireCheckpoint(const SubnetSource& s)
{
    if (!exists(s.checkpoint))
        throw InputError(pathForMessage(s.checkpoint) + (s.own_weights ? ": no such subnet checkpoint" : ": no such supernet checkpoint"));
}

// A subnet's calibration data, chosen and checked against its space's task (CalibrationData.h).
// `keepWouldDo`: only BatchNorm needs it (no int8 activation ranges follow).
std::shared_ptr<const ImageDataset> subnetCalibration(const DesignSpace& space, const QuantizeOptions& o, bool keepWouldDo,
                                                      std::string* name)
{
    *name = chooseCalibrationData(space, o.calib_data, keepWouldDo, o.words);
    return openCalibrationData(space, *name, keepWouldDo, o.words);
}

// prepareFloatModel with, for a subnet, its calibration data already open (null: open it here
// when BatchNorm is re-calibrated).
PreparedModel prepareFloat(const ModelSource& source, const QuantizeOptions& o, const JobControl& job, std::shared_ptr<const ImageDataset> calib,
                           std::string calibName)
{
    configureAllocator();
    setTorchThreads(o.threads);
    PreparedModel m;
    m.description = source.describe();
    if (const SubnetSource* s = source.asSubnet()) {
        // The images before the supernet is loaded: a refusal comes at once.
        if (o.bn_images > 0 && !calib) {
            requireCheckpoint(*s);
            calib = subnetCalibration(s->space, o, true, &calibName);
        }
        job.report(0, 3, s->own_weights ? "loading the subnet" : "loading the supernet");
        Subnet sub = s->own_weights ? loadSubnetCheckpoint(s->space, s->config, s->channels, s->checkpoint)
                                    : Supernet::load(s->space, s->checkpoint).extract(s->config);
        job.check();
        if (o.bn_images > 0) {
            job.report(1, 3, "re-calibrating BatchNorm");
            CalibrationOptions co;
            co.images = o.bn_images;
            m.bn_images = calibrateBn(sub, *calib, co, job);
        }
        m.calib_data = calib ? calibName : "";
        m.network = source.network();
        m.float_model = std::make_shared<FloatModel>(floatModelFromSubnet(m.network, sub));
        m.subnet = s->config;
        m.space = s->space;
        m.channels = s->channels;
        return m;
    }
    const ZooSource* z = source.asZoo();
    m.network = source.network();   // InputError when there is no model
    if (z->params) {
        m.params = *z->params;
        m.from_pickle = true;
        try {
            m.float_model = std::make_shared<FloatModel>(dequantizedModel(m.network, m.params));
        } catch (const InputError&) {
            m.float_model = nullptr;   // no scales: int8 only
        }
        return m;
    }
    ZooModule module(m.network, z->seed);
    module->eval();
    m.float_model = std::make_shared<FloatModel>(floatModelFromZoo(*module));
    return m;
}

}  // namespace

std::string PreparedModel::batchNorm() const
{
    if (!subnet) return "";
    return bn_images > 0 ? "re-calibrated on " + groupThousands(static_cast<std::int64_t>(bn_images)) + " images of " + calib_data
                         : "the checkpoint's statistics";
}

PreparedModel prepareFloatModel(const ModelSource& source, const QuantizeOptions& o, const JobControl& job)
{
    return prepareFloat(source, o, job, nullptr, "");
}

PreparedModel prepareModel(const ModelSource& source, const QuantizeOptions& o, const JobControl& job)
{
    if (const ZooSource* z = source.asZoo(); z && !z->params) {
        const Network& net = z->network;
        const std::string obstacle = loweringObstacle(net);
        if (!obstacle.empty()) throw InputError(net.name + ": " + obstacle);
        if (net.input.c != 3) throw InputError(net.name + ": quantizing needs image inputs (3 channels); this model takes " + std::to_string(net.input.c));
    }
    // A subnet's images, chosen and checked before anything is loaded; the int8 activation ranges
    // need them whatever BatchNorm does.
    std::shared_ptr<const ImageDataset> calib;
    std::string calibName;
    if (const SubnetSource* s = source.asSubnet()) {
        requireCheckpoint(*s);
        calib = subnetCalibration(s->space, o, false, &calibName);
    }
    PreparedModel m = prepareFloat(source, o, job, calib, calibName);
    if (m.from_pickle) return m;
    if (!calib) {
        calibName = o.calib_data.empty() ? kZooCalibrationData : o.calib_data;
        calib = openDataset(calibName);
    }
    m.calib_data = calibName;
    if (m.subnet) job.report(2, 3, "calibrating activations");
    const at::Tensor images = calibrationImages(*calib, o.calib_images, m.network.input.h, o.threads, &m.calib_images);
    m.params = quantizeModel(*m.float_model, images);
    m.params.source = m.description;
    if (m.subnet) job.report(3, 3, "quantized");
    return m;
}

Json QuantizeReport::toJson() const
{
    Json j{{"model", model},
           {"description", description},
           {"data", data},
           {"resolution", resolution},
           {"images", images},
           {"calib_images", calib_images},
           {"int8_top1", int8_top1},
           {"int8_seconds", int8_seconds},
           {"from_pickle", from_pickle}};
    j["float_top1"] = has_float ? Json(float_top1) : Json(nullptr);
    j["float_seconds"] = has_float ? Json(float_seconds) : Json(nullptr);
    j["agreement"] = has_float ? Json(agreement) : Json(nullptr);
    j["top1_drop"] = has_float ? Json(float_top1 - int8_top1) : Json(nullptr);
    return j;
}

QuantizeReport compareTop1(const PreparedModel& m, const std::string& dataSpec, std::size_t images, int threads, const JobControl& job)
{
    setTorchThreads(threads);
    std::unique_ptr<ImageDataset> data = openDataset(dataSpec);
    if (static_cast<int>(data->classNames().size()) != m.network.num_outputs)
        throw InputError(data->source() + " has " + std::to_string(data->classNames().size()) + " classes; " + m.network.name + " has " +
                         std::to_string(m.network.num_outputs));
    const TrainingGraph forward = lowerForward(m.network);
    Int8Forward int8(forward, m.params);
    // Batches on the int8 plan, the convs' integer sums on oneDNN: the same int8 outputs bit for bit
    // (docs/ONEDNN.md, "int8").
    int8.setConvAccumulator(std::make_shared<OneDnnInt8Accumulator>(int8));   // for images the plans decline
    OneDnnInt8Engine engine(int8);
    QuantizeReport r;
    r.model = m.network.name;
    r.description = m.description;
    r.data = dataSpec;
    r.resolution = m.network.input.h;
    r.calib_images = m.calib_images;
    r.from_pickle = m.from_pickle;
    r.has_float = m.float_model != nullptr;
    const std::vector<std::size_t> items = firstItems(data->size(), images);
    std::size_t fCorrect = 0, qCorrect = 0, agree = 0;
    for (std::size_t start = 0; start < items.size(); start += 100) {
        job.check();
        const std::vector<std::size_t> part(items.begin() + static_cast<std::ptrdiff_t>(start),
                                            items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), start + 100)));
        const Batch b = loadBatch(*data, part, r.resolution, {}, threads);
        std::vector<int> fPred(b.size(), -1), qPred(b.size(), -1);
        if (r.has_float) {
            const auto t0 = std::chrono::steady_clock::now();
            const at::Tensor logits = floatForward(*m.float_model, batchImages(b));
            const at::Tensor am = logits.argmax(1).to(at::kInt).contiguous();
            for (std::size_t i = 0; i < b.size(); ++i) fPred[i] = am.data_ptr<std::int32_t>()[i];
            r.float_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        const auto t1 = std::chrono::steady_clock::now();
        engine.predict(b.pixels.data(), static_cast<int>(b.size()), threads, qPred.data());
        r.int8_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
        for (std::size_t i = 0; i < b.size(); ++i) {
            fCorrect += fPred[i] == b.labels[i];
            qCorrect += qPred[i] == b.labels[i];
            agree += fPred[i] == qPred[i];
        }
        r.images += b.size();
        job.report(r.images, items.size(), "float and int8 forward");
    }
    const double n = r.images ? static_cast<double>(r.images) : 1.0;
    r.float_top1 = 100.0 * static_cast<double>(fCorrect) / n;
    r.int8_top1 = 100.0 * static_cast<double>(qCorrect) / n;
    r.agreement = 100.0 * static_cast<double>(agree) / n;
    return r;
}

ExportPlan planModelExport(const ExportRequest& rq, const JobControl& job)
{
    // A name the user gave is refused if it is no plain file name (it never leads outside the
    // folder); one derived from the model is made one.
    if (!rq.name.empty()) requireFileStem(rq.name, "export name");
    PreparedModel m = prepareModel(rq.model, rq.quantize, job);
    std::string name = rq.name;
    if (name.empty()) {
        name = m.network.name;   // "subnet" for a subnet
        for (char& c : name)
            if (c == '/' || static_cast<unsigned char>(c) < 0x20) c = '-';
    }
    return planExport(m.network, m.params, rq.scheme, rq.form, name);
}

}  // namespace tinyscope
