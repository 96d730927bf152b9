#pragma once
// The deployed (int8) top-1 of a design-space subnet, measured as `tinyscope quantize` measures it:
// our PTQ (quantizeModel) calibrated on images spread over a dataset, then Int8Forward in the exact
// arithmetic, with oneDNN accumulating the conv sums (bit-identical to its loops, docs/ONEDNN.md) —
// what `make-accdata --dtype int8` records per subnet.
#include "JobControl.h"
#include "nn/measure/EvaluationTypes.h"
#include "tinyengine/Int8Forward.h"

#include <ATen/core/Tensor.h>

namespace tinyscope {

class Subnet;
struct DesignSpace;

// `n` images spread over `data` (every k-th item, so all classes occur) at `resolution`, as an
// n × 3 × r × r tensor; `used` = how many could be read. InputError when none can.
at::Tensor calibrationImages(const ImageDataset& data, std::size_t n, int resolution, int threads, std::size_t* used = nullptr);

// `subnet` as it is (BN re-calibrated by the caller; not changed): PTQ on `calibImages` images of
// `calib`, int8 top-1 on `items` of `data` on `threads` workers.
Int8Top1 measureInt8Top1(const DesignSpace& space, const Subnet& subnet, const ImageDataset& calib, std::size_t calibImages,
                         const ImageDataset& data, const std::vector<std::size_t>& items, int threads = 1, const JobControl& job = {});
// The same measurement as an evaluator's result (the GUI's "int8, deployed", `eval --dtype int8`):
// top-1, per class, speed; engine "onednn-int8" (as make-accdata's int8 cards say), dtype "int8",
// oneDNN's ISA.
EvalResult measureInt8Result(const DesignSpace& space, const Subnet& subnet, const ImageDataset& calib, std::size_t calibImages,
                             const ImageDataset& data, const std::vector<std::size_t>& items, int threads = 1, const JobControl& job = {});

}  // namespace tinyscope
