#pragma once
// Two sparse-update schemes of one model side by side (the Training inspector's compare mode, issue
// 22): each memory figure of the ledgers of A and B, exact bytes, with the difference.
#include "graph/MemoryLedger.h"

#include <string>
#include <vector>

namespace tinyscope {

struct ComparedMemory {
    std::string key;     // "extra", "classifier_input", "masks", "biases", "saved_inputs", "weights",
                         // "training_peak", "inference_peak", "total"
    std::string label;
    std::int64_t a = 0, b = 0;   // bytes
    bool part = false;           // one of the extra memory's parts
    std::int64_t delta() const { return b - a; }
};

// Extra memory (analytic) and its five parts, the scheduled training peak, the inference peak and
// the total the budget limits (inference peak + extra).
std::vector<ComparedMemory> compareLedgers(const MemoryLedger& a, const MemoryLedger& b);

}  // namespace tinyscope
