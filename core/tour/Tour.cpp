#include "tour/Tour.h"

#include "Error.h"
#include "compress/LinearQuantization.h"
#include "io/EmbeddedText.h"
#include "io/Text.h"
#include "search/Constraints.h"
#include "search/SearchOptions.h"
#include "workspace/Workspace.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace tinyscope {

extern const EmbeddedText kEmbeddedTours[];
extern const int kEmbeddedToursCount;

namespace {

constexpr const char* kFormat = "tinyscope-tour/1";

// The type "one of a|b|c" over `names`.
std::string oneOf(const std::vector<std::string>& names)
{
    std::string type = "one of ";
    for (std::size_t i = 0; i < names.size(); ++i) type += (i ? "|" : "") + names[i];
    return type;
}

// The search's options and limits as the Search panel's search checks them (SearchOptions::validate
// on the default options with the values given; a limit must be positive). The panel's current
// options may differ when the step runs: the search checks again then.
void checkSearch(const JsonPath& at)
{
    SearchOptions o;
    if (at.has("algorithm")) o.algorithm = at["algorithm"].asString();
    if (at.has("population")) o.population = at["population"].asInt();
    if (at.has("generations")) o.generations = at["generations"].asInt();
    if (at.has("seed")) o.seed = static_cast<std::uint64_t>(at["seed"].asInt64());   // not negative: its spec's range
    try {
        o.validate();
        Constraints limits;
        if (at.has("macs_m")) limits.set("millionMACs", at["macs_m"].asDouble());
        if (at.has("sram_kb")) limits.set("KBPeakMemory", at["sram_kb"].asDouble());
    } catch (const InputError& e) {
        at.fail(e.what());
    }
}

// What each job of compress-run takes: uniform with prune, ratio with channels, bits with quantize
// (parsed as the panel parses them).
void checkCompressRun(const JsonPath& at)
{
    const std::string job = at["job"].asString();
    const std::pair<const char*, const char*> owners[] = {{"uniform", "prune"}, {"ratio", "channels"}, {"bits", "quantize"}};
    for (const auto& [arg, owner] : owners)
        if (at.has(arg) && job != owner) at[arg].fail(std::string("only the ") + owner + " job takes " + arg);
    if (at.has("bits")) {
        try {
            parseBitWidths(at["bits"].asString());
        } catch (const InputError& e) {
            at["bits"].fail(e.what());
        }
    }
}

std::string numberText(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.15g", v);
    return text;
}

}  // namespace

std::string TourArgSpec::rangeText() const
{
    if (min && max) return "in " + numberText(*min) + ".." + numberText(*max);
    if (min) return "at least " + numberText(*min);
    if (max) return "at most " + numberText(*max);
    return "";
}

const std::vector<std::string>& tourHighlightTargets()
{
    static const std::vector<std::string> names = {
        "subnet-controls", "cost-totals", "subnet-diagram", "layer-costs", "peak-chart", "evaluation",                  // Design space
        "predictor-card", "predictor-scatter",                                                                         // Predictor
        "search-limits", "search-options", "pareto-chart", "convergence-chart", "winner-card", "run-history",          // Search
        "inspector-toolbar", "memory-cards", "memory-chart", "scheme-table", "training-graph", "fine-tune",            // Training inspector
        "sensitivity-curves", "parameter-bars", "sparsity-table", "weight-histogram", "channel-speedup",                // Compress
        "bit-width-accuracy", "kmeans-view"};
    return names;
}

const std::vector<TourActionSpec>& tourActionSpecs()
{
    static const std::vector<TourActionSpec> specs = {
        {"workspace",
         "opens a shipped workspace (space, supernet, predictor, data, limits)",
         {{"name", oneOf(shippedWorkspaceNames()), true, "a shipped workspace"}}},
        {"panel", "shows a panel", {{"panel", "one of design-space|predictor|search|training|compress", true, "the panel"}}},
        {"subnet",
         "selects a subnet of the design space by its preset button",
         {{"preset", "one of min|lab-max|full-max|random", true, "which one"}}},
        {"subnet-edit",
         "changes the current subnet (each value given is set everywhere it applies; the result must be in the space)",
         {{"image_size", "integer", false, "input resolution", 1},
          {"wid", "integer", false, "width setting (index into the space's widths)", 0},
          {"ks", "integer", false, "kernel size of every block", 1},
          {"e", "integer", false, "expand ratio of every block", 1},
          {"d", "integer", false, "extra depth of every elastic stage", 0}},
         1},
        {"highlight",
         "points at a part of the window (a frame flashes around it)",
         {{"target", oneOf(tourHighlightTargets()), true, "a part of the window (docs/TOURS.md)"}}},
        {"search",
         "runs a search on the Search panel and waits for it (options and limits as the search checks them)",
         {{"algorithm", "one of evolution|random", false, "default: the panel's"},
          {"macs_m", "number", false, "MAC limit in millions (enables the limit)"},
          {"sram_kb", "number", false, "peak SRAM limit in KB (enables the limit)"},
          {"population", "integer", false, "population / batch size"},
          {"generations", "integer", false, "generations / batches"},
          {"seed", "integer", false, "random seed (numpy's range)", 0, 4294967295.0}},
         0,
         99,
         checkSearch},
        {"use-winner", "selects the last search's winner in the other panels", {}},
        {"deploy-dialog", "opens the Deploy dialog for the last search's winner", {}},
        {"model", "picks the Training inspector's model", {{"model", "string", true, "a zoo model or design-space"}}},
        {"scheme",
         "applies a sparse-update scheme in the Training inspector",
         {{"published", "string", false, "a published scheme of the model, e.g. 49kb"},
          {"bias_only", "integer", false, "update the biases of the last N convs", 0},
          {"last_layers", "integer", false, "update weights and biases of the last k convs", 0},
          {"classifier_only", "boolean", false, "update the classifier only"},
          {"full", "boolean", false, "update every weight and bias (full back-propagation)"}},
         1,
         1},
        {"inspector-tab", "shows a tab on the Training inspector's right side", {{"tab", "one of graph|fine-tune", true, "which tab"}}},
        {"budget", "sets the Training inspector's SRAM budget", {{"kb", "number", true, "the budget in KB (the inspector's field)", 1, 100000}}},
        {"export-dialog", "opens the TinyEngine export dialog for the inspector's model and scheme", {}},
        {"close-dialogs", "closes the dialogs earlier steps opened", {}},
        {"compress-settings",
         "sets the Compress panel's image counts and training (the fields above its pages and on them)",
         {{"images", "integer", false, "test images each measurement uses (0: all 10,000)", 0, 10000},
          {"calib_images", "integer", false, "BatchNorm re-calibration images (0: the checkpoint's statistics)", 0, 10000},
          {"epochs", "integer", false, "fine-tuning / QAT epochs after each job", 0, 100},
          {"train_images", "integer", false, "training images per epoch (0: all 55,000)", 0, 55000}},
         1},
        {"compress-page", "shows a page of the Compress panel", {{"page", "one of pruning|channels|quantization", true, "the page"}}},
        {"compress-run",
         "runs a job of the Compress panel on the current subnet and waits for it",
         {{"job", "one of scan|prune|channels|quantize", true, "the sensitivity scan, Prune and measure, Prune channels, Quantize"},
          {"uniform", "number", false, "prune: every layer at this sparsity first", 0, 1},
          {"ratio", "number", false, "channels: the pruned-out ratio", 0, 0.95},
          {"bits", "string", false, "quantize: bit widths, e.g. \"8,4,2\""}},
         1,
         2,
         checkCompressRun},
        {"compress-deploy",
         "opens the Deploy dialog on the subnet the last prune or channels job kept",
         {{"kind", "one of pruned|channel-pruned", true, "which job's subnet"}}},
    };
    return specs;
}

namespace {

const TourActionSpec* findSpec(const std::string& name)
{
    for (const TourActionSpec& s : tourActionSpecs())
        if (s.name == name) return &s;
    return nullptr;
}

std::vector<std::string> specNames()
{
    std::vector<std::string> names;
    for (const TourActionSpec& s : tourActionSpecs()) names.push_back(s.name);
    return names;
}

void checkArg(const JsonPath& v, const TourArgSpec& a)
{
    const std::string choice = "one of ";
    if (a.type == "string") {
        if (v.asString().empty()) v.fail("expected a non-empty string");
    } else if (a.type == "integer" || a.type == "number") {
        // An integer fits an int (the driver reads it as one) unless its range says more (a seed).
        const bool wide = a.max && *a.max > std::numeric_limits<int>::max();
        const double x = a.type == "number" ? v.asDouble() : static_cast<double>(wide ? v.asInt64() : v.asInt());
        if ((a.min && x < *a.min) || (a.max && x > *a.max)) v.fail("must be " + a.rangeText() + ", got " + jsonBrief(v.node()));
    } else if (a.type == "boolean") {
        v.asBool();
    } else if (a.type.compare(0, choice.size(), choice) == 0) {
        const std::string got = v.asString();
        std::vector<std::string> allowed;
        std::string rest = a.type.substr(choice.size());
        for (std::size_t start = 0;;) {
            const std::size_t bar = rest.find('|', start);
            allowed.push_back(rest.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
            if (bar == std::string::npos) break;
            start = bar + 1;
        }
        if (std::find(allowed.begin(), allowed.end(), got) == allowed.end())
            v.fail("expected one of " + formatList(allowed) + ", got '" + escapedForMessage(got) + "'");
    }
}

TourAction parseAction(const JsonPath& at)
{
    if (!at.node().is_object()) at.fail("expected an object such as {\"action\": \"panel\", \"panel\": \"search\"}");
    TourAction a;
    a.action = at["action"].asString();
    a.where = at.where();
    const TourActionSpec* spec = findSpec(a.action);
    if (!spec) at["action"].fail("unknown action '" + escapedForMessage(a.action) + "' (actions: " + formatList(specNames()) + ")");
    int given = 0;
    for (const auto& item : at.node().items()) {
        // Named, not a structured binding: C++17 lambdas cannot capture those (clang refuses).
        const std::string& key = item.key();
        const Json& value = item.value();
        if (key == "action") continue;
        auto arg = std::find_if(spec->args.begin(), spec->args.end(), [&](const TourArgSpec& s) { return s.name == key; });
        if (arg == spec->args.end()) {
            std::vector<std::string> names;
            for (const TourArgSpec& s : spec->args) names.push_back(s.name);
            at.fail("action '" + a.action + "' has no argument '" + escapedForMessage(key) + "'" +
                    (names.empty() ? std::string(" (it takes none)") : " (arguments: " + formatList(names) + ")"));
        }
        checkArg(at[key.c_str()], *arg);
        a.args[key] = value;
        ++given;
    }
    for (const TourArgSpec& s : spec->args)
        if (s.required && !a.args.contains(s.name)) at.fail("action '" + a.action + "' needs '" + s.name + "' (" + s.meaning + ")");
    if (given < spec->min_given || given > spec->max_given)
        at.fail("action '" + a.action + "' takes " +
                (spec->min_given == spec->max_given ? "exactly " + std::to_string(spec->min_given) : "at least " + std::to_string(spec->min_given)) +
                " of its arguments, got " + std::to_string(given));
    if (spec->check) spec->check(at);
    return a;
}

}  // namespace

Tour parseTour(const Json& j, const std::string& source, const std::string& id)
{
    const JsonPath root(source, j);
    if (!j.is_object()) root.fail("expected a tour object (docs/TOURS.md)");
    if (root["format"].asString() != kFormat)
        root["format"].fail(std::string("expected \"") + kFormat + "\", got " + jsonBrief(j["format"]));
    Tour t;
    t.id = id;
    t.title = root["title"].asString();
    if (root.has("summary")) t.summary = root["summary"].asString();
    if (root.has("order")) t.order = root["order"].asIntIn(0, 1000);
    const JsonPath steps = root["steps"];
    if (steps.size() == 0) steps.fail("a tour needs at least one step");
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const JsonPath s = steps[i];
        TourStep step;
        step.title = s["title"].asString();
        step.text = s["text"].asString();
        if (s.has("do")) {
            const JsonPath actions = s["do"];
            for (std::size_t k = 0; k < actions.size(); ++k) step.actions.push_back(parseAction(actions[k]));
        }
        t.steps.push_back(std::move(step));
    }
    return t;
}

namespace {
std::string stem(const std::string& path)
{
    std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
    return name;
}
}  // namespace

Tour readTourFile(const std::string& path) { return parseTour(readJsonFile(path), path, stem(path)); }

std::vector<std::string> shippedTourNames()
{
    std::vector<std::pair<int, std::string>> byOrder;
    for (const std::string& name : embeddedNames(kEmbeddedTours, kEmbeddedToursCount)) byOrder.emplace_back(shippedTour(name).order, name);
    std::sort(byOrder.begin(), byOrder.end());
    std::vector<std::string> names;
    for (auto& [order, name] : byOrder) names.push_back(name);
    return names;
}

Tour shippedTour(const std::string& name)
{
    if (const char* text = findEmbedded(kEmbeddedTours, kEmbeddedToursCount, name))
        return parseTour(parseJson(text, "tour " + name), "tour " + name, name);
    throw InputError("unknown tour '" + escapedForMessage(name) + "' (shipped: " + formatList(embeddedNames(kEmbeddedTours, kEmbeddedToursCount)) + "; or give a path to a tour JSON file)");
}

Tour loadTour(const std::string& nameOrPath)
{
    if (nameOrPath.find('/') != std::string::npos || (nameOrPath.size() > 5 && nameOrPath.compare(nameOrPath.size() - 5, 5, ".json") == 0))
        return readTourFile(nameOrPath);
    return shippedTour(nameOrPath);
}

}  // namespace tinyscope
