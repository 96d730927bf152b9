// Tinyscope's own header (not part of TFLM): the builtins a Tinyscope export (docs/DEPLOY.md) and a usual
// small int8 classifier need, registered in one MicroMutableOpResolver. Host TFLM (tests/tflm/tflm_run.cc)
// and TFLM on the emulated Cortex-M7 (resources/device/harness/tflm_main.cc) both use it, so they accept
// the same models. An op added here needs its kernel in tests/tflm/CMakeLists.txt and
// resources/device/engines/tflm.sh (the links say so).
#ifndef TINYSCOPE_TFLM_OPS_H
#define TINYSCOPE_TFLM_OPS_H

#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"

namespace tinyscope_tflm {

constexpr unsigned kOpCount = 23;
using Resolver = tflite::MicroMutableOpResolver<kOpCount>;

inline void addOps(Resolver& r)
{
    r.AddConv2D();
    r.AddDepthwiseConv2D();
    r.AddFullyConnected();
    r.AddAdd();
    r.AddSub();
    r.AddMul();
    r.AddMean();
    r.AddAveragePool2D();
    r.AddMaxPool2D();
    r.AddReshape();
    r.AddSqueeze();
    r.AddPad();
    r.AddConcatenation();
    r.AddRelu();
    r.AddRelu6();
    r.AddHardSwish();
    r.AddLogistic();
    r.AddTanh();
    r.AddQuantize();
    r.AddDequantize();
    r.AddSoftmax();
    r.AddTranspose();
    r.AddStridedSlice();
}

}  // namespace tinyscope_tflm

#endif
