#pragma once
// The runs a user made, kept between sessions (a JSON file in the user's state folder): limits,
// options, seed, the winner, per-generation statistics, the Pareto front and a sample of the
// evaluated points — enough to re-open a run's charts without keeping every point forever.
// Exported as JSON (the records) or CSV (one row per run).
#include "search/SearchResult.h"

#include <optional>
#include <string>
#include <vector>

namespace tinyscope {

// One run in a line: what the runs table and the CSV show.
struct SearchRunSummary {
    std::string algorithm;
    std::string limits;                        // SearchRunRecord::limitsText()
    long long seed = 0;
    int population = 0, generations = 0;
    struct Best {
        double accuracy = 0;
        std::int64_t macs = 0, peak_activation_bytes = 0, params = 0, flash_bytes = 0;
        Json config;
    };
    std::optional<Best> best;                  // none when no subnet met the limits
    double seconds = 0;
};

struct SearchRunRecord {
    std::string when;                          // ISO 8601, local time
    std::string space;                         // space name
    // toJson(SearchResult) without "evaluated", plus "sample": rows of (costs, accuracy, generation,
    // origin; older records lack origin) and, when the sample is every evaluated point, the populations.
    Json result;
    static constexpr std::size_t kSamplePoints = 2000;

    // Builds a record; `sample` keeps at most kSamplePoints evaluated points, evenly spread.
    static SearchRunRecord fromResult(const SearchResult& r, const std::string& space, const std::string& when);
    Json toJson() const;
    static SearchRunRecord fromJson(const Json& j, const std::string& source);

    // Quick accessors over `result`.
    double bestAccuracy() const;
    std::string limitsText() const;            // "MACs ≤ 60 M, peak SRAM ≤ 250 KB"
    SearchRunSummary summary() const;
};

class SearchHistory {
public:
    static constexpr std::size_t kMaxRuns = 200;

    // Reads `path` if it exists; a damaged file is set aside (renamed *.bad) rather than lost.
    explicit SearchHistory(std::string path);

    const std::vector<SearchRunRecord>& runs() const { return runs_; }
    void add(SearchRunRecord r);               // newest first; keeps the last kMaxRuns; saves
    void remove(std::size_t index);            // saves
    void clear();
    const std::string& path() const { return path_; }
    const std::string& loadWarning() const { return warning_; }

    Json toJson() const;                       // {"runs": [...]}
    std::string toCsv() const;                 // one row per run
    void save() const;                         // atomic write

private:
    std::string path_;
    std::vector<SearchRunRecord> runs_;
    std::string warning_;
};

}  // namespace tinyscope
