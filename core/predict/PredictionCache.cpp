#include "predict/PredictionCache.h"

namespace tinyscope {

std::string networkKey(const DesignSpace& s, const SubnetConfig& c)
{
    std::string k;
    k.reserve(static_cast<std::size_t>(4 + s.numStages() + 2 * s.maxBlocks()));
    auto put = [&k](int v) { k.push_back(static_cast<char>(v & 0xff)); };
    put(c.wid);
    put(c.image_size);
    put(c.image_size >> 8);
    for (int st = 0; st < s.numStages(); ++st) {
        const int depth = c.activeDepth(s, st);
        put(depth);
        const int first = s.stages[static_cast<std::size_t>(st)].first_block;
        for (int j = 0; j < depth; ++j) {
            put(c.ks[static_cast<std::size_t>(first + j)]);
            put(c.e[static_cast<std::size_t>(first + j)]);
        }
    }
    return k;
}

void PredictionCache::lookup(const std::vector<SubnetConfig>& configs, std::vector<double>& out,
                             std::vector<std::size_t>& missing, std::vector<std::size_t>& duplicateOf) const
{
    out.assign(configs.size(), 0.0);
    missing.clear();
    duplicateOf.resize(configs.size());
    std::unordered_map<std::string, std::size_t> firstMissing;
    for (std::size_t i = 0; i < configs.size(); ++i) {
        duplicateOf[i] = i;
        std::string k = key(configs[i]);
        auto it = map_.find(k);
        if (it != map_.end()) {
            out[i] = it->second;
            continue;
        }
        auto [pos, inserted] = firstMissing.emplace(std::move(k), i);
        if (inserted) missing.push_back(i);
        else duplicateOf[i] = pos->second;
    }
}

void PredictionCache::store(const SubnetConfig& config, double value) { map_[key(config)] = value; }

void PredictionCache::clear()
{
    map_.clear();
    hits_ = misses_ = 0;
}

}  // namespace tinyscope
