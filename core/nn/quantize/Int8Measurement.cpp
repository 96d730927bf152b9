#include "nn/quantize/Int8Measurement.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "graph/ForwardLowering.h"
#include "nn/measure/Evaluator.h"
#include "nn/onednn/OneDnnInt8Accumulator.h"
#include "nn/OneDnnInfo.h"
#include "nn/onednn/OneDnnInt8Plan.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "zoo/SubnetNetwork.h"

#include <ATen/ATen.h>

namespace tinyscope {

at::Tensor calibrationImages(const ImageDataset& data, std::size_t n, int resolution, int threads, std::size_t* used)
{
    if (data.size() == 0) throw InputError(data.source() + ": the calibration dataset is empty");
    n = std::max<std::size_t>(1, std::min(n, data.size()));
    std::vector<std::size_t> items(n);
    const std::size_t step = data.size() / n;
    for (std::size_t i = 0; i < n; ++i) items[i] = i * step;
    const Batch b = loadBatch(data, items, resolution, {}, threads);
    if (b.size() == 0) throw InputError(data.source() + ": no calibration image could be read");
    if (used) *used = b.size();
    return batchImages(b).clone();
}

Int8Top1 measureInt8Top1(const DesignSpace& space, const Subnet& subnet, const ImageDataset& calib, std::size_t calibImages,
                         const ImageDataset& data, const std::vector<std::size_t>& items, int threads, const JobControl& job)
{
    const SubnetConfig& config = subnet.config();
    const Network network = networkFromSubnet(space, config, "subnet");
    const FloatModel model = floatModelFromSubnet(network, subnet);
    const QuantizedParams params = quantizeModel(model, calibrationImages(calib, calibImages, config.image_size, 1));
    const TrainingGraph graph = lowerForward(network);
    Int8Forward forward(graph, params);
    forward.setConvAccumulator(std::make_shared<OneDnnInt8Accumulator>(forward));   // for images the plans decline
    return evaluateInt8OnOneDnn(forward, data, items, config.image_size, {}, threads, job);
}

EvalResult measureInt8Result(const DesignSpace& space, const Subnet& subnet, const ImageDataset& calib, std::size_t calibImages,
                             const ImageDataset& data, const std::vector<std::size_t>& items, int threads, const JobControl& job)
{
    const Int8Top1 t = measureInt8Top1(space, subnet, calib, calibImages, data, items, threads, job);
    EvalResult r;
    r.images = t.images;
    r.correct = t.correct;
    r.top1 = t.top1;
    r.skipped = t.skipped;
    r.seconds = t.seconds;
    r.images_per_second = t.seconds > 0 ? static_cast<double>(t.images) / t.seconds : 0.0;
    r.classes = t.classes;
    r.confusion = t.confusion;
    const std::size_t k = static_cast<std::size_t>(t.classes);
    r.class_images.assign(k, 0);
    r.class_correct.assign(k, 0);
    for (std::size_t truth = 0; truth < k; ++truth)
        for (std::size_t guess = 0; guess < k; ++guess) {
            r.class_images[truth] += t.confusion[truth * k + guess];
            if (truth == guess) r.class_correct[truth] += t.confusion[truth * k + guess];
        }
    r.engine = "onednn-int8";
    r.dtype = "int8";
    r.isa = oneDnnIsa();
    return r;
}

}  // namespace tinyscope
