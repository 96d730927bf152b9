#pragma once
// A run of the search history brought back as a typed SearchResult (the Search panel shows it):
// the reader that stands beside the writer (SearchRunRecord::fromResult, toJson(SearchResult)).
//
// A record keeps the winner, the front, the generations and an even sample of at most 2,000
// evaluated points (SearchRunRecord), not every point: the rebuilt result's `evaluated` holds the
// Pareto front (with configs) followed by the sample (costs and accuracy; no configs, the record
// has none, except a sampled point equal to a front point), so paretoFront() gives the stored front
// and the charts what the live run showed. When the sample is every point and the record has the
// populations (runs since search playback), `result.populations` index the sample (offset by the
// front); otherwise it is empty and playback shows each generation's evaluated points only.
#include "search/SearchHistory.h"
#include "space/DesignSpace.h"

#include <string>

namespace tinyscope {

struct StoredSearch {
    SearchResult result;
    std::size_t sampled = 0;         // points of the sample in `result.evaluated`
    std::size_t evaluated = 0;       // points the search evaluated
    std::string trainingPattern;     // the fine-tuning limit's pattern ("" when not limited)
};

// `space`: the run's space (configs are validated against it). InputError naming "history" and
// the key when the record is damaged.
StoredSearch storedSearch(const SearchRunRecord& record, const DesignSpace& space);

}  // namespace tinyscope
