// Tinyscope's shim (not a TFLM file): the runtimes' copy of tflite-micro lacks this header, which
// tensorflow/compiler/mlir/lite/schema/schema_utils.cc includes for TFLITE_DCHECK only. TFLM's
// kernels take the same macros from tensorflow/lite/kernels/internal/compatibility.h.
#pragma once
#include "tensorflow/lite/kernels/internal/compatibility.h"
