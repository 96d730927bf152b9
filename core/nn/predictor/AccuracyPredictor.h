#pragma once
// The lab's accuracy predictor: an MLP 128 → 400 → 400 → 400 → 1 (ReLU, bias-free last layer)
// over the ArchEncoder one-hot, plus a fixed base accuracy (the mean label), trained with L1 loss
// and Adam. Implemented on LibTorch's tensor kernels with a hand-written backward pass (no
// autograd graph per step, no allocation in the loop). Optional ensemble: members are averaged.
//
// This header is torch-free (pimpl) so the CLI and GUI include it without LibTorch headers.
#include "predict/AccuracyDataset.h"
#include "predict/AccuracyOracle.h"
#include "predict/PredictionCache.h"
#include "predict/PredictorCard.h"
#include "predict/PredictorRecipe.h"
#include "space/DesignSpace.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

struct TrainingCallbacks {
    // After each epoch of each ensemble member (member is 0-based).
    std::function<void(const EpochRecord&, int member)> onEpoch;
    // Fraction of all training steps done, 0..1, a few hundred times per run.
    std::function<void(double fraction)> onProgress;
    // Checked between batches; training then throws CancelledError and the predictor is unchanged.
    const std::atomic<bool>* cancel = nullptr;
};

class AccuracyPredictor : public AccuracyOracle {
public:
    explicit AccuracyPredictor(const DesignSpace& space);   // untrained
    ~AccuracyPredictor() override;
    AccuracyPredictor(AccuracyPredictor&&) noexcept;
    AccuracyPredictor& operator=(AccuracyPredictor&&) noexcept;

    // Trains from scratch with recipe.seed, split by recipe.validation_fraction (the lab's split
    // semantics, see AccuracyDataset::split). Deterministic for a seed and thread count.
    void train(const AccuracyDataset& data, const PredictorRecipe& recipe, const TrainingCallbacks& callbacks = {});
    bool trained() const;

    // AccuracyOracle: top-1 % for many configs in one batched forward; repeated networks are served
    // from the cache. Configs must be valid for space(). Safe to call from several threads (they
    // take turns).
    std::vector<double> predict(const std::vector<SubnetConfig>& configs) override;
    std::string describe() const override;
    // Encoder positions of `config` that never occurred in the training data.
    std::vector<std::string> caveats(const SubnetConfig& config) const override;
    // Same, without the cache.
    std::vector<double> predictUncached(const std::vector<SubnetConfig>& configs) const;

    // Metrics of this predictor on some rows of a dataset (percent).
    PredictionMetrics evaluate(const AccuracyDataset& data, const std::vector<std::size_t>& rows) const;
    // The validation split of the last train() (or of the card's recipe applied to `data`).
    DatasetSplit splitOf(const AccuracyDataset& data) const;

    // Writes the weights and the card: `path` names either file (X.bin or X.json); the other one
    // gets the same stem. Atomic writes.
    void save(const std::string& path);
    // Reads X.json + X.bin (either name given). Refuses a predictor made for another space, a
    // weights file that does not match its card, or a truncated file, with a message.
    static AccuracyPredictor load(const std::string& path, const DesignSpace& space);

    const PredictorCard& card() const;
    const DesignSpace& space() const;
    std::string path() const;            // the .bin it was loaded from or saved to, "" otherwise

    void setThreads(int threads);        // LibTorch threads for prediction (default 2)
    int threads() const;
    void setCaching(bool on);            // on by default
    const PredictionCache& cache() const;
    void clearCache();

private:
    void trainImpl(const AccuracyDataset& data, const PredictorRecipe& recipe, const TrainingCallbacks& callbacks);
    struct Impl;
    std::unique_ptr<Impl> d_;
};

// "X.bin" / "X.json" / "X" -> {"X.bin", "X.json"}
std::pair<std::string, std::string> predictorFilePaths(const std::string& path);

}  // namespace tinyscope
