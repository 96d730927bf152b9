#pragma once
// Where the Fine-tune tab keeps its runs (docs/FINETUNING.md, "Fine-tune tab"): one folder per
// fine-tuning run, <root>/<model>-<qas|noqas>-<hash>, and one per contribution analysis,
// <root>/contributions/<model>-<hash>; the hash (SHA-256, 12 hex digits) is over everything the
// figures depend on, so a changed setting never meets another run's checkpoint.
#include "nn/finetune/ContributionAnalysis.h"
#include "nn/finetune/FineTuneJob.h"

#include <QString>

namespace tinyscope::ui {

// `model` names the folder ("subnet" or the zoo name); the request's scheme file is read.
QString fineTuneRunFolder(const QString& root, const QString& model, const FineTuneRequest& rq);
// The analysis of `o.base` (its short recipe already set) with o's tails, window and ratios.
QString contributionFolder(const QString& root, const QString& model, const ContributionOptions& o);

}  // namespace tinyscope::ui
