#pragma once
// TinyEngine's own TFLite inference code generator run on an exported .tflite
// (code_generator.CodegenUtilTFlite.GenerateSourceFilesFromTFlite of ../shared/reference/runtimes/
// tinyengine, with Debian's python3-numpy and python3-flatbuffers): does it accept the model, and the
// memory its scheduler plans (the "input_output" buffer it returns, and genModel.h's PEAK_MEM and
// MODEL_SIZE; docs/DEPLOY.md). The
// generator writes ./codegen into a temporary folder, removed afterwards. Qt-free, torch-free.
#include "JobControl.h"

#include <cstdint>
#include <string>

namespace tinyscope {

struct TinyEngineTfliteReport {
    bool accepted = false;
    std::string refusal;             // when not accepted: the generator's last error line (e.g. an unsupported op)
    std::int64_t activation_bytes = 0;   // the scheduled activation arena (the generator's "input_output" buffer)
    std::int64_t peak_bytes = 0;     // genModel.h's PEAK_MEM: the arena + the im2col (sbuf) and kernel (kbuf) buffers
    std::int64_t model_bytes = 0;    // genModel.h's MODEL_SIZE: the weights and biases it lays out in flash
    int generated_files = 0;         // files under codegen/{Include,Source}
    double seconds = 0;
};

// The Debian package of the first missing piece ("" if all are there): python3, python3-numpy,
// python3-flatbuffers. Throws nothing.
std::string missingTinyEngineTflitePackage();

// Where TinyEngine's sources are: $TINYSCOPE_SHARED/reference/runtimes/tinyengine, else
// <data root>/../shared/reference/runtimes/tinyengine; "" when absent.
std::string tinyEngineRoot();

// Runs the generator (its own process group; `timeout_s` bounds it, job.cancel stops it). A missing
// package or TinyEngine throws InputError naming it; the generator refusing the model is a report
// with accepted = false, not an exception.
TinyEngineTfliteReport runTinyEngineTfliteCodegen(const std::string& tflitePath, const JobControl& job = {}, double timeout_s = 600);

}  // namespace tinyscope
