#pragma once
// A design-space subnet quantized through the real pipeline, for the deploy suites:
// a mcunet-fmnist supernet with PyTorch's default initialisation (seeded) saved into `dir`, the
// subnet `config` ("min", "max" or a config file) BN re-calibrated on `bnImages` and quantized on
// `calibImages` Fashion-MNIST holdout images by prepareModel.
#include "nn/quantize/QuantizationJob.h"
#include "nn/supernet/Supernet.h"
#include "space/SpacePresets.h"

#include <QString>

namespace tinyscope::test {

inline PreparedModel quantizedSubnet(const QString& dir, std::uint64_t seed, const std::string& config, std::size_t calibImages,
                                     std::size_t bnImages)
{
    const std::string ckpt = (dir + QStringLiteral("/supernet.pth")).toStdString();
    Supernet::initialize(loadSpace("mcunet-fmnist"), seed).save(ckpt);
    const ModelSource spec = ModelSource::subnetByName("mcunet-fmnist", config, ckpt);
    QuantizeOptions o;
    o.calib_images = calibImages;
    o.bn_images = bnImages;
    return prepareModel(spec, o);
}

}  // namespace tinyscope::test
