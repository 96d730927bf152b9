#pragma once
// Contribution analysis (tiny-training's way of choosing a sparse-update scheme, paper §2.2): short
// fine-tuning runs measure the top-1 gain of updating the biases of the last k backbone convs
// (against the classifier only) and of adding one conv's weight at a ratio on top of a reference
// bias tail; bestSchemeUnderBudget (graph/SchemeKnapsack.h) then picks the scheme with the largest
// summed gain under a memory budget. Every run is a fineTune run in its own folder under `out`, so
// an interrupted analysis resumes and a finished run is read back. Torch-free interface.
#include "JobControl.h"
#include "graph/SchemeKnapsack.h"
#include "nn/finetune/FineTuneJob.h"

#include <functional>
#include <string>
#include <vector>

namespace tinyscope {

struct ContributionOptions {
    FineTuneRequest base;            // model, data, quantize; its recipe is the short runs' recipe (the
                                     // model is prepared once for all runs unless base.prepared is given)
    std::string out;                 // one folder per run below it (required: the analysis is long)
    std::vector<int> tails;          // bias tails k to measure (empty: every 4th up to all backbone convs)
    int window = 20;                 // weight candidates: the non-depthwise convs among the last `window`
    std::vector<double> ratios{0.125, 0.25, 0.5, 1.0};
    // The short runs' recipe when the caller keeps the defaults: 1 epoch of 2,000 images, top-1 on
    // 1,000, no augmentation (less noise in a difference of two short runs).
    static FineTuneRecipe shortRecipe(const FineTuneRecipe& main);
};

struct ContributionRun {
    std::string what;                // "classifier", "bias-only:8", "weight 24 @ 1/4"
    std::string scheme;              // the scheme spec it ran
    double top1 = 0;
    double gain = 0;                 // against its baseline
    double seconds = 0;
};

struct ContributionResult {
    SchemeContributions contributions;
    int reference_tail = 0;          // the bias tail the weight gains are measured on
    double classifier_top1 = 0, reference_top1 = 0;
    std::vector<ContributionRun> runs;
    Json toJson() const;
};

ContributionResult analyseContributions(const ContributionOptions& options, const JobControl& job = {},
                                        const std::function<void(const ContributionRun&, std::size_t done, std::size_t total)>& onRun = {});

}  // namespace tinyscope
