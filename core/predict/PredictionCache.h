#pragma once
// Remembers the accuracy of configs already answered, keyed by the network a config describes
// (its canonical form: entries of inactive blocks do not matter). Evolution re-proposes the same
// subnets often once the population converges; every oracle (MLP or measurement) uses this.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace tinyscope {

// The network a config describes, as a short byte string: wid, image_size, active depth per stage
// and (k, e) of active blocks. Equal for configs that differ only in inactive blocks' entries.
std::string networkKey(const DesignSpace& space, const SubnetConfig& config);

class PredictionCache {
public:
    explicit PredictionCache(const DesignSpace& space) : space_(&space) {}

    // Fills `out` (resized to configs.size()) from the cache and returns the positions not found,
    // de-duplicated: `missing` holds the first position of each distinct missing network, and
    // `duplicateOf[i]` (for positions repeated in the batch) points at that first position.
    void lookup(const std::vector<SubnetConfig>& configs, std::vector<double>& out, std::vector<std::size_t>& missing,
                std::vector<std::size_t>& duplicateOf) const;
    void store(const SubnetConfig& config, double value);

    // predict(configs) through the cache: `compute` is called once with the distinct missing configs.
    template <class Compute>
    std::vector<double> resolve(const std::vector<SubnetConfig>& configs, Compute compute)
    {
        std::vector<double> out;
        std::vector<std::size_t> missing, dup;
        lookup(configs, out, missing, dup);
        if (!missing.empty()) {
            std::vector<SubnetConfig> batch;
            batch.reserve(missing.size());
            for (std::size_t i : missing) batch.push_back(configs[i]);
            std::vector<double> got = compute(batch);
            for (std::size_t k = 0; k < missing.size(); ++k) {
                out[missing[k]] = got[k];
                store(configs[missing[k]], got[k]);
            }
            for (std::size_t i = 0; i < configs.size(); ++i)
                if (dup[i] != i) out[i] = out[dup[i]];
        }
        hits_ += configs.size() - missing.size();
        misses_ += missing.size();
        return out;
    }

    void clear();
    std::size_t size() const { return map_.size(); }
    std::size_t hits() const { return hits_; }
    std::size_t misses() const { return misses_; }

    // The cache key: networkKey(space, config).
    std::string key(const SubnetConfig& config) const { return networkKey(*space_, config); }

private:
    const DesignSpace* space_;
    std::unordered_map<std::string, double> map_;
    std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace tinyscope
