#pragma once
// A sparsity per layer from the sensitivity scan that reaches a size target — what Lab 1 asks the
// student to pick by hand from the curves (issue 50, docs/COMPRESSION.md "Choosing sparsities").
// One accuracy budget for all layers: for a drop d, each layer takes the largest scanned sparsity
// whose top-1 stays within d of the dense top-1 (none of them: 0); the smallest d whose sizes reach
// the target wins, so the layers that tolerate pruning take most of it. Torch-free and Qt-free.
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct LayerScan {
    std::string layer;
    std::int64_t params = 0;
    std::vector<double> sparsity, top1;   // the scan's points (any order)
};

struct SparsityChoice {
    bool reached = false;              // false: even every layer at its largest scanned sparsity is too large
    double drop = 0;                   // the accuracy budget used (points of top-1)
    std::vector<double> sparsity;      // per layer, in the scan's order
    std::int64_t nonzero = 0;          // expected non-zero parameters: round(n × (1 − s)) per layer + `others`
    std::int64_t smallest = 0;         // the fewest non-zeros the scan's sparsities allow
};

// `others`: parameters no layer holds (kept dense); `target`: the non-zero parameters allowed.
SparsityChoice chooseSparsities(const std::vector<LayerScan>& scan, double denseTop1, std::int64_t others, std::int64_t target);

}  // namespace tinyscope
