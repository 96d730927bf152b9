#pragma once
// The lab's accuracy dataset (MCUNET_SPACE.md §7): (subnet config, measured top-1 %) pairs, read
// without torch from a folder holding src/*_acc_table.json (lists of [config, top1]) or a merged
// acc.dict, or from one such file. A malformed entry is an InputError naming the file and index.
#include "space/ArchEncoder.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct AccuracySample {
    SubnetConfig config;
    double top1 = 0;   // measured top-1 accuracy in percent (the files' unit)
};

// Indices into AccuracyDataset::samples() for training and validation.
struct DatasetSplit {
    std::vector<std::size_t> train;
    std::vector<std::size_t> validation;
    std::uint64_t seed = 0;
    double validation_fraction = 0;
};

class AccuracyDataset {
public:
    // `path`: a dataset folder (acc.dict is read when present, as the lab does, else every
    // src/*acc_table.json in name order), or a single acc.dict / *_acc_table.json file.
    static AccuracyDataset load(const std::string& path, const DesignSpace& space);
    // Pairs from one parsed document: an array of [config, top1] pairs, or an object mapping a
    // JSON-encoded config string to top1 (once-for-all's acc.dict). `source` names it in errors.
    static AccuracyDataset fromJson(const Json& doc, const DesignSpace& space, const std::string& source);

    const std::vector<AccuracySample>& samples() const { return samples_; }
    std::size_t size() const { return samples_.size(); }
    const std::string& origin() const { return origin_; }
    const std::vector<std::string>& files() const { return files_; }   // the files read, in order

    // The lab's base accuracy: mean of all labels as fractions (acc / 100).
    double meanLabel() const;

    // Shuffles the indices like Python's random.shuffle after random.seed(seed), then takes the
    // last round(n·fraction) as validation (the lab: 40,000 / 10,000 of 50,000).
    DatasetSplit split(double validationFraction, std::uint64_t seed) const;

    // Refuses data a predictor cannot learn from or be judged on, with the reason: fewer than
    // kMinTrainingPairs training pairs, one distinct subnet or one distinct accuracy among them,
    // or a validation part (when there is one) too small or too uniform for r and τ to exist.
    static constexpr std::size_t kMinTrainingPairs = 10;
    void requireTrainable(const DatasetSplit& split) const;

    // Row-major features (rows × encoder.dims()) and labels as fractions, for the given rows.
    std::vector<float> features(const ArchEncoder& encoder, const std::vector<std::size_t>& rows) const;
    std::vector<float> labels(const std::vector<std::size_t>& rows) const;
    // Encoder positions that are 1 in none of the given rows (e.g. wid = 2 in the lab's data).
    std::vector<int> unseenFeatures(const ArchEncoder& encoder, const std::vector<std::size_t>& rows) const;

    void append(const AccuracyDataset& other);

private:
    std::vector<AccuracySample> samples_;
    std::vector<std::string> files_;
    std::string origin_;
};

}  // namespace tinyscope
