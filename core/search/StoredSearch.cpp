#include "search/StoredSearch.h"

#include "io/JsonFile.h"
#include "search/TrainingMemoryLimit.h"

namespace tinyscope {

namespace {

CostSummary costOf(const JsonPath& c)
{
    CostSummary cost;
    cost.macs = c["macs"].asInt64();
    cost.peak_activation_bytes = c["peak_activation_bytes"].asInt64();
    cost.params = c["params"].asInt64();
    cost.flash_bytes = c["flash_bytes"].asInt64();
    return cost;
}

SearchCandidate candidateOf(const JsonPath& c, const DesignSpace& space)
{
    SearchCandidate s;
    s.config = SubnetConfig::fromJson(c["config"].node(), space, c["config"].where());
    s.cost = costOf(c);
    s.accuracy = c["predicted_accuracy"].asDouble();
    s.generation = c["generation"].asInt();
    if (c.has("origin")) s.origin = originFromName(c["origin"].asString());
    return s;
}

}  // namespace

StoredSearch storedSearch(const SearchRunRecord& record, const DesignSpace& space)
{
    const JsonPath res("history", record.result);
    StoredSearch out;
    SearchResult& r = out.result;
    r.options = searchOptionsFromJson(res["options"]);
    const Json definitions = res.has("constraint_definitions") ? res["constraint_definitions"].node() : Json::object();
    r.constraints = TrainingMemoryLimit::restore(space, res["constraints"].node(), definitions, "history");
    if (r.constraints.find(TrainingMemoryLimit::kKey))
        out.trainingPattern = JsonPath("history: constraint_definitions", definitions)[TrainingMemoryLimit::kKey]["pattern"].asString();
    r.oracle = res.has("oracle") ? res["oracle"].asString() : std::string();
    r.accuracy_measured = res.has("accuracy_measured") && res["accuracy_measured"].asBool();
    if (res["best"].node().is_object()) {
        r.best = candidateOf(res["best"], space);
        r.found = true;
        // What the limits reported on the winner (e.g. training_memory) is kept beside its costs.
        const Json costs = toJson(r.best);
        for (const auto& [key, value] : res["best"].node().items())
            if (!costs.contains(key)) r.best_reports[key] = value;
    }
    for (std::size_t i = 0, n = res["history"].size(); i < n; ++i) {
        const JsonPath g = res["history"][i];
        GenerationStats s;
        s.generation = g["generation"].asInt();
        s.best = g["best"].asDouble();
        s.mean = g["mean"].asDouble();
        if (g.has("evaluated")) s.evaluated = static_cast<std::size_t>(g["evaluated"].asInt64());
        if (g.has("seconds")) s.seconds = g["seconds"].asDouble();
        r.history.push_back(s);
    }
    // The front first: where a sampled point ties with a front point, paretoFront() keeps the front's (it has a config).
    const std::size_t front = res["pareto"].size();
    for (std::size_t i = 0; i < front; ++i) r.evaluated.push_back(candidateOf(res["pareto"][i], space));
    if (res.has("sample")) {
        const JsonPath rows = res["sample"]["rows"];
        for (std::size_t i = 0, n = rows.size(); i < n; ++i) {
            // Columns as SearchRunRecord writes them; the record keeps no config for a sampled point.
            const JsonPath row = rows[i];
            SearchCandidate c;
            c.cost.macs = row[std::size_t{0}].asInt64();
            c.cost.peak_activation_bytes = row[std::size_t{1}].asInt64();
            c.cost.params = row[std::size_t{2}].asInt64();
            c.cost.flash_bytes = row[std::size_t{3}].asInt64();
            c.accuracy = row[std::size_t{4}].asDouble();
            c.generation = row[std::size_t{5}].asInt();
            if (row.size() > 6) c.origin = originFromName(row[std::size_t{6}].asString());
            c.index = i;
            // A front point sampled too gets the front's config (clicking it on the chart loads it).
            for (std::size_t f = 0; f < front; ++f) {
                const SearchCandidate& p = r.evaluated[f];
                if (p.cost.macs == c.cost.macs && p.cost.peak_activation_bytes == c.cost.peak_activation_bytes &&
                    p.cost.params == c.cost.params && p.accuracy == c.accuracy && p.generation == c.generation)
                    c.config = p.config;
            }
            r.evaluated.push_back(c);
        }
        out.sampled = r.evaluated.size() - front;
        out.evaluated = static_cast<std::size_t>(res["sample"]["of"].asInt64());
        // The populations index every evaluated point: kept when the sample is all of them (SearchRunRecord).
        if (res["sample"].has("populations") && out.sampled == out.evaluated) {
            const JsonPath pops = res["sample"]["populations"];
            for (std::size_t g = 0, n = pops.size(); g < n; ++g) {
                std::vector<std::size_t> members;
                for (std::size_t k = 0, m = pops[g].size(); k < m; ++k) {
                    const auto i = static_cast<std::size_t>(pops[g][k].asInt64());
                    if (i >= out.sampled) pops[g][k].fail("index " + std::to_string(i) + " past the " + std::to_string(out.sampled) + " points");
                    members.push_back(front + i);
                }
                r.populations.push_back(std::move(members));
            }
            if (r.populations.size() != r.history.size()) res["sample"]["populations"].fail("one population per generation expected");
        }
    }
    r.seconds = res["seconds"].asDouble();
    if (res.has("warnings"))
        for (std::size_t i = 0, n = res["warnings"].size(); i < n; ++i) r.warnings.push_back(res["warnings"][i].asString());
    r.cancelled = res.has("cancelled") && res["cancelled"].asBool();
    return out;
}

}  // namespace tinyscope
