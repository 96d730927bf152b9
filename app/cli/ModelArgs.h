#pragma once
// The model and quantization flags that quantize, export and deploy share: --model NAME [--params P
// [--scales S]] [--seed S] | --supernet CKPT --config CFG [--space S]; --calib-data, --calib-images,
// --threads.
#include "cli/CliArgs.h"
#include "nn/quantize/QuantizationJob.h"

namespace tinyscope::cli {

ModelSpec modelFromArgs(const CliArgs& a);        // InputError for a missing or inconsistent choice
QuantizeOptions quantizeFromArgs(const CliArgs& a);
// The --help lines of the options above.
extern const char* const kModelOptions;

}  // namespace tinyscope::cli
