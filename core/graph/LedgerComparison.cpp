#include "graph/LedgerComparison.h"

namespace tinyscope {

std::vector<ComparedMemory> compareLedgers(const MemoryLedger& a, const MemoryLedger& b)
{
    const ExtraMemory& x = a.extra;
    const ExtraMemory& y = b.extra;
    return {{"extra", "extra memory", x.total(), y.total(), false},
            {"classifier_input", "classifier input", x.classifier_input, y.classifier_input, true},
            {"masks", "ReLU masks", x.masks(), y.masks(), true},
            {"biases", "biases", x.biases, y.biases, true},
            {"saved_inputs", "saved inputs", x.saved_inputs, y.saved_inputs, true},
            {"weights", "weights", x.weights, y.weights, true},
            {"training_peak", "training peak (scheduled)", a.peak_bytes, b.peak_bytes, false},
            {"inference_peak", "inference peak", a.inference_peak_bytes, b.inference_peak_bytes, false},
            {"total", "inference peak + extra", a.inference_peak_bytes + x.total(), b.inference_peak_bytes + y.total(), false}};
}

}  // namespace tinyscope
