#pragma once
// The model and quantization flags that quantize, export and deploy share: --model NAME [--params P
// [--scales S]] [--seed S] | --supernet CKPT --config CFG [--space S]; --calib-data, --calib-images,
// --threads.
#include "cli/CliArgs.h"
#include "nn/quantize/QuantizationJob.h"

namespace tinyscope::cli {

// The model, resolved here (space, config, zoo network, params pickle read and checked); InputError
// for a missing or inconsistent choice.
ModelSource modelFromArgs(const CliArgs& a);
QuantizeOptions quantizeFromArgs(const CliArgs& a);
// The --help lines of the options above.
extern const char* const kModelOptions;
// The valued options above, with a command's own (`more`): what the command's CliArgs accepts.
std::set<std::string> withModelOptions(std::set<std::string> more);

}  // namespace tinyscope::cli
