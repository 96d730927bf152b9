#pragma once
// Measuring a subnet: once-for-all BN re-calibration on holdout images, top-1 accuracy on a
// dataset with progress and cancel, and ranked classes for one image.
#include "JobControl.h"
#include "data/BatchLoader.h"
#include "nn/measure/EvalEngine.h"
#include "nn/measure/EvaluationTypes.h"
#include "nn/supernet/Supernet.h"

namespace tinyscope {

// Re-estimates every BN's running statistics from `data` (once-for-all's set_running_statistics)
// on options.engine. Returns the number of images used; `report` (or null): that and which engine ran it.
std::size_t calibrateBn(Subnet& subnet, const ImageDataset& data, const CalibrationOptions& options,
                        const JobControl& job = {}, CalibrationReport* report = nullptr);

// A batch's pixels as an n × 3 × r × r tensor: a view, no copy (the batch must outlive it and the
// tensor must not be written to).
at::Tensor batchImages(const Batch& batch);

// Top-1 of `subnet` (folded or not; it is not changed) on `items` of `data`, in batches of `batch`, on
// `engine` (oneDNN falls back to LibTorch fp32 with result.engine_note when it refuses the subnet).
// bf16 needs the oneDNN engine and a CPU with AVX-512 BF16 or AMX: InputError otherwise, naming the
// instruction set.
EvalResult evaluateTop1(const Subnet& subnet, const ImageDataset& data, const std::vector<std::size_t>& items,
                        int batch = 100, const JobControl& job = {}, EvalEngine engine = EvalEngine::OneDnn,
                        EvalDtype dtype = EvalDtype::Fp32);


std::vector<ClassScore> classifyImage(const Subnet& subnet, const Image& image, const std::vector<std::string>& classNames);

}  // namespace tinyscope
