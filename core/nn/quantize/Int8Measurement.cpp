#include "nn/quantize/Int8Measurement.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "graph/ForwardLowering.h"
#include "nn/measure/Evaluator.h"
#include "nn/onednn/OneDnnInt8Accumulator.h"
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

}  // namespace tinyscope
