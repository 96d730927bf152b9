#include "search/SearchResult.h"

#include <algorithm>
#include <numeric>

namespace tinyscope {

std::vector<std::size_t> paretoFront(const std::vector<SearchCandidate>& points)
{
    std::vector<std::size_t> order(points.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const SearchCandidate &x = points[a], &y = points[b];
        if (x.cost.macs != y.cost.macs) return x.cost.macs < y.cost.macs;
        if (x.accuracy != y.accuracy) return x.accuracy > y.accuracy;
        return a < b;
    });
    std::vector<std::size_t> front;
    double bestAcc = -1e300;
    for (std::size_t i : order) {
        if (points[i].accuracy > bestAcc) {
            front.push_back(i);
            bestAcc = points[i].accuracy;
        }
    }
    return front;
}

const char* originName(CandidateOrigin o)
{
    switch (o) {
    case CandidateOrigin::initial: return "initial";
    case CandidateOrigin::mutation: return "mutation";
    case CandidateOrigin::crossover: return "crossover";
    case CandidateOrigin::random: return "random";
    case CandidateOrigin::unknown: break;
    }
    return "unknown";
}

CandidateOrigin originFromName(const std::string& name)
{
    for (CandidateOrigin o : {CandidateOrigin::initial, CandidateOrigin::mutation, CandidateOrigin::crossover, CandidateOrigin::random})
        if (name == originName(o)) return o;
    return CandidateOrigin::unknown;
}

std::vector<std::size_t> SearchResult::paretoFront() const { return tinyscope::paretoFront(evaluated); }

Json toJson(const SearchCandidate& c)
{
    return Json{{"config", c.config.toJson()},
                {"predicted_accuracy", c.accuracy},
                {"macs", c.cost.macs},
                {"peak_activation_bytes", c.cost.peak_activation_bytes},
                {"params", c.cost.params},
                {"flash_bytes", c.cost.flash_bytes},
                {"generation", c.generation},
                {"origin", originName(c.origin)}};
}

Json toJson(const SearchResult& r, bool evaluated)
{
    Json history = Json::array();
    for (const GenerationStats& g : r.history)
        history.push_back({{"generation", g.generation},
                           {"best", g.best},
                           {"mean", g.mean},
                           {"children_mean", g.children_mean},
                           {"evaluated", g.evaluated},
                           {"seconds", g.seconds}});
    Json best = r.found ? toJson(r.best) : Json(nullptr);
    if (r.found)
        for (auto it = r.best_reports.begin(); it != r.best_reports.end(); ++it) best[it.key()] = it.value();
    Json j{{"algorithm", r.options.algorithm},
           {"options", toJson(r.options)},
           {"constraints", r.constraints.toJson()},
           {"constraints_text", r.constraints.describe()},
           {"oracle", r.oracle},
           {"accuracy_measured", r.accuracy_measured},
           {"best", best},
           {"history", history},
           {"seconds", r.seconds},
           {"oracle_calls", r.oracle_calls},
           {"cost_evaluations", r.cost_evaluations},
           {"rejected", r.rejected},
           {"fallbacks", r.fallbacks},
           {"warnings", r.warnings},
           {"cancelled", r.cancelled}};
    const Json definitions = r.constraints.definitions();
    if (!definitions.empty()) j["constraint_definitions"] = definitions;
    Json pareto = Json::array();
    for (std::size_t i : r.paretoFront()) pareto.push_back(toJson(r.evaluated[i]));
    j["pareto"] = pareto;
    if (evaluated) {
        // Columns rather than objects: 50,000 points stay a few MB.
        Json macs = Json::array(), peak = Json::array(), params = Json::array(), flash = Json::array(),
             acc = Json::array(), gen = Json::array(), origin = Json::array();
        for (const SearchCandidate& c : r.evaluated) {
            macs.push_back(c.cost.macs);
            peak.push_back(c.cost.peak_activation_bytes);
            params.push_back(c.cost.params);
            flash.push_back(c.cost.flash_bytes);
            acc.push_back(c.accuracy);
            gen.push_back(c.generation);
            origin.push_back(originName(c.origin));
        }
        j["evaluated"] = Json{{"count", r.evaluated.size()},
                              {"macs", macs},
                              {"peak_activation_bytes", peak},
                              {"params", params},
                              {"flash_bytes", flash},
                              {"predicted_accuracy", acc},
                              {"generation", gen},
                              {"origin", origin}};
        if (!r.populations.empty()) j["populations"] = r.populations;
    }
    return j;
}

}  // namespace tinyscope
