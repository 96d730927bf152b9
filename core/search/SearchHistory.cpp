#include "search/SearchHistory.h"

#include "Error.h"
#include "io/DataPaths.h"

#include <cstdio>
#include <sstream>

namespace tinyscope {

SearchRunRecord SearchRunRecord::fromResult(const SearchResult& r, const std::string& space, const std::string& when)
{
    SearchRunRecord rec;
    rec.when = when;
    rec.space = space;
    rec.result = tinyscope::toJson(r, false);
    Json sample = Json::array();
    const std::size_t n = r.evaluated.size();
    const std::size_t step = n > kSamplePoints ? (n + kSamplePoints - 1) / kSamplePoints : 1;
    for (std::size_t i = 0; i < n; i += step) {
        const SearchCandidate& c = r.evaluated[i];
        sample.push_back({c.cost.macs, c.cost.peak_activation_bytes, c.cost.params, c.cost.flash_bytes, c.accuracy, c.generation,
                          originName(c.origin)});
    }
    rec.result["sample"] = {{"columns", {"macs", "peak_activation_bytes", "params", "flash_bytes", "predicted_accuracy", "generation", "origin"}},
                            {"of", n},
                            {"rows", sample}};
    // Playback: the populations index the evaluated points, so they are kept when the sample is all of them.
    if (step == 1 && !r.populations.empty()) rec.result["sample"]["populations"] = r.populations;
    return rec;
}

Json SearchRunRecord::toJson() const { return Json{{"when", when}, {"space", space}, {"result", result}}; }

SearchRunRecord SearchRunRecord::fromJson(const Json& j, const std::string& source)
{
    JsonPath p(source, j);
    SearchRunRecord r;
    r.when = p["when"].asString();
    r.space = p["space"].asString();
    const JsonPath res = p["result"];
    if (!res.node().is_object()) res.fail("expected an object");
    // The fields the panel reads must be there and well-typed.
    res["best"]["predicted_accuracy"].asDouble();
    res["options"]["population_size"].asInt();
    res["history"].size();
    res["constraints"];
    r.result = res.node();
    return r;
}

double SearchRunRecord::bestAccuracy() const
{
    const Json& b = result["best"];
    return b.is_object() ? b["predicted_accuracy"].get<double>() : 0.0;
}

std::string SearchRunRecord::limitsText() const
{
    // Written since training-memory limits, whose definition fromJson cannot restore alone.
    if (result.contains("constraints_text") && result["constraints_text"].is_string()) return result["constraints_text"].get<std::string>();
    try {
        return Constraints::fromJson(result["constraints"], "history").describe();
    } catch (const std::exception&) {
        return result["constraints"].dump();
    }
}

SearchRunSummary SearchRunRecord::summary() const
{
    SearchRunSummary s;
    s.algorithm = result["algorithm"].get<std::string>();
    s.limits = limitsText();
    s.seed = result["options"]["seed"].get<long long>();
    s.population = result["options"]["population_size"].get<int>();
    s.generations = result["options"]["max_time_budget"].get<int>();
    const Json& b = result["best"];
    if (b.is_object())
        s.best = SearchRunSummary::Best{b["predicted_accuracy"].get<double>(), b["macs"].get<std::int64_t>(),
                                        b["peak_activation_bytes"].get<std::int64_t>(), b["params"].get<std::int64_t>(),
                                        b["flash_bytes"].get<std::int64_t>(), b["config"]};
    s.seconds = result["seconds"].get<double>();
    return s;
}

SearchHistory::SearchHistory(std::string path) : path_(std::move(path))
{
    if (path_.empty() || !fileExists(path_)) return;
    try {
        Json j = readJsonFile(path_);
        JsonPath runs = JsonPath(path_, j)["runs"];
        for (std::size_t i = 0; i < runs.size(); ++i) runs_.push_back(SearchRunRecord::fromJson(runs[i].node(), path_ + ": runs[" + std::to_string(i) + "]"));
    } catch (const std::exception& e) {
        runs_.clear();
        warning_ = std::string(e.what()) + " (set aside as " + path_ + ".bad)";
        std::rename(path_.c_str(), (path_ + ".bad").c_str());
    }
}

void SearchHistory::add(SearchRunRecord r)
{
    runs_.insert(runs_.begin(), std::move(r));
    if (runs_.size() > kMaxRuns) runs_.resize(kMaxRuns);
    save();
}

void SearchHistory::remove(std::size_t index)
{
    if (index < runs_.size()) runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(index));
    save();
}

void SearchHistory::clear()
{
    runs_.clear();
    save();
}

Json SearchHistory::toJson() const
{
    Json runs = Json::array();
    for (const SearchRunRecord& r : runs_) runs.push_back(r.toJson());
    return Json{{"format", "tinyscope-search-history"}, {"runs", runs}};
}

namespace {
std::string csvField(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}
}  // namespace

std::string SearchHistory::toCsv() const
{
    std::ostringstream os;
    os << "when,space,algorithm,limits,seed,population,generations,best_top1,macs,peak_activation_bytes,params,"
          "flash_bytes,seconds,config\n";
    for (const SearchRunRecord& r : runs_) {
        const SearchRunSummary s = r.summary();
        os << csvField(r.when) << ',' << csvField(r.space) << ',' << s.algorithm << ',' << csvField(s.limits) << ',' << s.seed << ','
           << s.population << ',' << s.generations << ',';
        if (s.best)
            os << s.best->accuracy << ',' << s.best->macs << ',' << s.best->peak_activation_bytes << ',' << s.best->params << ','
               << s.best->flash_bytes << ',';
        else
            os << ",,,,,";
        os << s.seconds << ',' << csvField(s.best ? s.best->config.dump() : "") << '\n';
    }
    return os.str();
}

void SearchHistory::save() const
{
    if (!path_.empty()) writeJsonFile(path_, toJson(), 1);
}

}  // namespace tinyscope
