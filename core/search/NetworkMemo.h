#pragma once
// A thread-safe memo of one value per network of a design space, keyed by networkKey (subnets that
// build the same network share an entry): what the search's training limits compute once per
// network (TrainingMemoryLimit, TinyEngineTrainingLimit). The value is computed outside the lock;
// past `maxEntries` the memo starts over.
#include "predict/PredictionCache.h"
#include "space/DesignSpace.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace tinyscope {

template <class Value>
class NetworkMemo {
public:
    explicit NetworkMemo(std::size_t maxEntries) : maxEntries_(maxEntries) {}

    template <class Compute>
    Value get(const DesignSpace& space, const SubnetConfig& config, Compute compute) const
    {
        std::string key = networkKey(space, config);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = values_.find(key);
            if (it != values_.end()) return it->second;
        }
        Value value = compute();
        std::lock_guard<std::mutex> lock(mutex_);
        if (values_.size() >= maxEntries_) values_.clear();
        values_.emplace(std::move(key), value);
        return value;
    }

    std::size_t size() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return values_.size();
    }

private:
    std::size_t maxEntries_;
    mutable std::mutex mutex_;
    mutable std::unordered_map<std::string, Value> values_;
};

}  // namespace tinyscope
