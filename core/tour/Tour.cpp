#include "tour/Tour.h"

#include "Error.h"
#include "io/EmbeddedText.h"
#include "io/Text.h"

#include <algorithm>

namespace tinyscope {

extern const EmbeddedText kEmbeddedTours[];
extern const int kEmbeddedToursCount;

namespace {
constexpr const char* kFormat = "tinyscope-tour/1";
}

const std::vector<TourActionSpec>& tourActionSpecs()
{
    static const std::vector<TourActionSpec> specs = {
        {"workspace", "opens a shipped workspace (space, supernet, predictor, data, limits)", {{"name", "string", true, "e.g. fashion-mnist, lab3-vww"}}},
        {"panel", "shows a panel", {{"panel", "one of design-space|predictor|search|training", true, "the panel"}}},
        {"subnet",
         "selects a subnet of the design space by its preset button",
         {{"preset", "one of min|lab-max|full-max|random", true, "which one"}}},
        {"subnet-edit",
         "changes the current subnet (each value given is set everywhere it applies)",
         {{"image_size", "integer", false, "input resolution"},
          {"wid", "integer", false, "width setting (index into the space's widths)"},
          {"ks", "integer", false, "kernel size of every block"},
          {"e", "integer", false, "expand ratio of every block"},
          {"d", "integer", false, "extra depth of every elastic stage"}},
         1},
        {"highlight", "points at a part of the window (a frame flashes around it)", {{"target", "string", true, "a name from docs/TOURS.md"}}},
        {"search",
         "runs a search on the Search panel and waits for it",
         {{"algorithm", "one of evolution|random", false, "default: the panel's"},
          {"macs_m", "number", false, "MAC limit in millions (enables the limit)"},
          {"sram_kb", "number", false, "peak SRAM limit in KB (enables the limit)"},
          {"population", "integer", false, "population / batch size"},
          {"generations", "integer", false, "generations / batches"},
          {"seed", "integer", false, "random seed"}}},
        {"use-winner", "selects the last search's winner in the other panels", {}},
        {"deploy-dialog", "opens the Deploy dialog for the last search's winner", {}},
        {"model", "picks the Training inspector's model", {{"model", "string", true, "a zoo model or design-space"}}},
        {"scheme",
         "applies a sparse-update scheme in the Training inspector",
         {{"published", "string", false, "a published scheme of the model, e.g. 49kb"},
          {"bias_only", "integer", false, "update the biases of the last N convs"},
          {"last_layers", "integer", false, "update weights and biases of the last k convs"},
          {"classifier_only", "boolean", false, "update the classifier only"},
          {"full", "boolean", false, "update every weight and bias (full back-propagation)"}},
         1,
         1},
        {"inspector-tab", "shows a tab on the Training inspector's right side", {{"tab", "one of graph|fine-tune", true, "which tab"}}},
        {"budget", "sets the Training inspector's SRAM budget", {{"kb", "number", true, "the budget in KB"}}},
        {"export-dialog", "opens the TinyEngine export dialog for the inspector's model and scheme", {}},
        {"close-dialogs", "closes the dialogs earlier steps opened", {}},
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
    const std::string oneOf = "one of ";
    if (a.type == "string") {
        if (v.asString().empty()) v.fail("expected a non-empty string");
    } else if (a.type == "integer") {
        v.asInt64();
    } else if (a.type == "number") {
        v.asDouble();
    } else if (a.type == "boolean") {
        v.asBool();
    } else if (a.type.compare(0, oneOf.size(), oneOf) == 0) {
        const std::string got = v.asString();
        std::vector<std::string> allowed;
        std::string rest = a.type.substr(oneOf.size());
        for (std::size_t start = 0;;) {
            const std::size_t bar = rest.find('|', start);
            allowed.push_back(rest.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
            if (bar == std::string::npos) break;
            start = bar + 1;
        }
        if (std::find(allowed.begin(), allowed.end(), got) == allowed.end())
            v.fail("expected one of " + formatList(allowed) + ", got '" + got + "'");
    }
}

TourAction parseAction(const JsonPath& at)
{
    if (!at.node().is_object()) at.fail("expected an object such as {\"action\": \"panel\", \"panel\": \"search\"}");
    TourAction a;
    a.action = at["action"].asString();
    a.where = at.where();
    const TourActionSpec* spec = findSpec(a.action);
    if (!spec) at["action"].fail("unknown action '" + a.action + "' (actions: " + formatList(specNames()) + ")");
    int given = 0;
    for (const auto& [key, value] : at.node().items()) {
        if (key == "action") continue;
        auto arg = std::find_if(spec->args.begin(), spec->args.end(), [&](const TourArgSpec& s) { return s.name == key; });
        if (arg == spec->args.end()) {
            std::vector<std::string> names;
            for (const TourArgSpec& s : spec->args) names.push_back(s.name);
            at.fail("action '" + a.action + "' has no argument '" + key + "'" +
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
    throw InputError("unknown tour '" + name + "' (shipped: " + formatList(embeddedNames(kEmbeddedTours, kEmbeddedToursCount)) + "; or give a path to a tour JSON file)");
}

Tour loadTour(const std::string& nameOrPath)
{
    if (nameOrPath.find('/') != std::string::npos || (nameOrPath.size() > 5 && nameOrPath.compare(nameOrPath.size() - 5, 5, ".json") == 0))
        return readTourFile(nameOrPath);
    return shippedTour(nameOrPath);
}

}  // namespace tinyscope
