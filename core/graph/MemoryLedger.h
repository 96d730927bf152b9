#pragma once
// Training memory of a sparse-update scheme (MEMORY_MODEL.md):
//  * the analytic extra memory of tiny-training's nelem_saved_for_backward, per conv and in
//    total: classifier input, 1-bit clamp masks and int32 biases of the bias-updated convs,
//    saved int8 inputs (k channels) and int8 weights of the weight-updated convs;
//  * a peak-SRAM estimate over the execution schedule: the int8 inference working set of each
//    forward step (in-place depthwise) plus the tensors saved for backward alive then, each
//    backward step's float32 gradients plus the saved tensors not yet consumed, plus the
//    trainable weights/biases held in SRAM — with operator reordering / in-place update
//    (gradients applied as soon as produced) and without it (all parameter gradients kept
//    until the optimizer step); and the inference-only peak beside it.
// docs/TRAINING_GRAPH.md says exactly what each number includes.
//
// TrainingMemoryModel does the per-network work once; ledger() is then O(layers), a few
// microseconds, so a view can recompute it on every toggle.
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "zoo/Network.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct LedgerRow {                 // one conv (index order; the classifier last)
    int index = 0;
    int layer = 0;
    std::string name, role;
    bool classifier = false;
    bool bias = false;             // bias updated
    double ratio = 0.0;
    int k = 0, cin = 0;            // updated input channels of cin
    std::int64_t mask_bits = 0;
    std::int64_t bias_bytes = 0;
    std::int64_t saved_input_bytes = 0;
    std::int64_t weight_bytes = 0;
    std::int64_t classifier_input_bytes = 0;
    double totalBytes() const
    {
        return static_cast<double>(mask_bits) / 8.0 + static_cast<double>(bias_bytes + saved_input_bytes + weight_bytes +
                                                                           classifier_input_bytes);
    }
};

struct ExtraMemory {
    std::int64_t classifier_input = 0;
    std::int64_t mask_bits = 0;
    std::int64_t biases = 0;
    std::int64_t saved_inputs = 0;
    std::int64_t weights = 0;
    std::int64_t masks() const { return (mask_bits + 7) / 8; }
    std::int64_t total() const { return classifier_input + masks() + biases + saved_inputs + weights; }
    std::int64_t totalBits() const { return 8 * (classifier_input + biases + saved_inputs + weights) + mask_bits; }
};

struct ScheduleStep {
    bool backward = false;
    int layer = -1;                     // Network layer
    std::int64_t working = 0;           // forward: int8 activations alive; backward: float32 gradients alive
    std::int64_t saved = 0;             // tensors kept for backward, alive at this step
    std::int64_t accumulated = 0;       // no reordering: parameter gradients produced so far
    std::int64_t total = 0;             // working + saved + trainable
    std::int64_t totalNoReorder() const { return total + accumulated; }
};

struct MemoryLedger {
    std::string model;
    AutodiffMode mode = AutodiffMode::Correct;
    std::vector<LedgerRow> rows;
    ExtraMemory extra;
    std::int64_t trainable_bytes = 0;   // SRAM copies of updated weights (k channels) and int32 biases, classifier included
    std::int64_t saved_bytes = 0;       // all tensors the schedule keeps for backward (masks bit-packed, add masks 1 B/element)
    std::int64_t peak_bytes = 0;        // with operator reordering / in-place update
    std::int64_t peak_bytes_no_reorder = 0;
    std::int64_t inference_peak_bytes = 0;
    int peak_step = -1, peak_step_no_reorder = -1;   // index into schedule
    int inference_peak_layer = -1;
    std::vector<ScheduleStep> schedule;
    std::vector<char> backward;         // per Network layer: runs a backward step under this scheme

    Json toJson(const Network& net, bool withSchedule = true) const;
};

class TrainingMemoryModel {
public:
    explicit TrainingMemoryModel(Network net);   // by value: callers that are done with theirs move it in

    MemoryLedger ledger(const ResolvedScheme& scheme, AutodiffMode mode = AutodiffMode::Correct) const;
    // The analytic part only (no schedule).
    ExtraMemory extraMemory(const ResolvedScheme& scheme) const;

    const Network& network() const { return net_; }
    std::int64_t inferencePeakBytes() const { return inference_peak_; }

private:
    struct Use {
        int layer;
        int slot;
    };
    Network net_;
    std::vector<std::int64_t> bytes_;            // int8 size of each layer's output (index layer + 1; 0 = network input)
    std::vector<std::vector<Use>> consumers_;    // per tensor
    std::vector<Use> survivor_;                  // per tensor: the consumer whose gradient the reference walk keeps
    std::vector<std::int64_t> working_;          // per layer: int8 inference working set
    std::int64_t inference_peak_ = 0;
    int inference_peak_layer_ = -1;

    int tensorOf(int layer) const { return layer + 1; }

    // ledger() in steps. Which layers run a backward step, and which input edges carry a gradient
    // (correct mode: every edge from a layer that needs one; reference mode: only the edges the
    // overwriting walk keeps).
    struct GradientFlow {
        std::vector<char> need;   // per layer
        bool carries(const TrainingMemoryModel& m, AutodiffMode mode, int layer, int slot) const;
    };
    void addRows(const ResolvedScheme& scheme, MemoryLedger& m) const;                     // per conv, and trainable bytes
    GradientFlow gradientFlow(const ResolvedScheme& scheme, AutodiffMode mode) const;
    std::vector<std::int64_t> savedBytes(const ResolvedScheme& scheme, const GradientFlow& flow, AutodiffMode mode) const;   // per layer
    void addSchedule(const ResolvedScheme& scheme, const GradientFlow& flow, AutodiffMode mode, const std::vector<std::int64_t>& savedOf,
                     MemoryLedger& m) const;                                                // forward, then backward steps
};

}  // namespace tinyscope
