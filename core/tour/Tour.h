#pragma once
// A guided tour: steps that each explain one idea and drive the workbench to show it (open a panel,
// pick a subnet, run a search under limits, apply a sparse-update scheme, open a dialog, point at a
// widget). Tours are data (JSON, docs/TOURS.md), so a lecturer writes one without building the
// app; the shipped ones (resources/tours/*.json) are compiled in. This header reads and validates
// them; the GUI (ui/TourDriver) performs the actions.
#include "io/JsonFile.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tinyscope {

// One thing a step does, e.g. {"action": "search", "macs_m": 60, "sram_kb": 250}.
struct TourAction {
    std::string action;   // one of tourActionSpecs()' names
    Json args = Json::object();   // the other members, validated against the action's spec
    std::string where;    // "<file>: steps[3].do[1]", for messages about performing it
};

struct TourStep {
    std::string title;
    std::string text;     // a short explanation; simple HTML (<b>, <i>, <br>) allowed
    std::vector<TourAction> actions;   // performed in order when the step is shown
};

struct Tour {
    std::string id;       // the file name without .json for shipped tours
    std::string title;
    std::string summary;
    int order = 0;        // position in Help → Tours (then by id)
    std::vector<TourStep> steps;
};

// The action vocabulary: name, what it does, and its arguments ("name: type — meaning").
struct TourArgSpec {
    std::string name;
    std::string type;     // "string", "integer", "number", "boolean", or "one of a|b|c"
    bool required = false;
    std::string meaning;
    std::optional<double> min = std::nullopt, max = std::nullopt;   // integers and numbers: the range of the control they set
    std::string rangeText() const;    // "in 1..100000", "at least 0", "" without bounds
};
struct TourActionSpec {
    std::string name;
    std::string meaning;
    std::vector<TourArgSpec> args;
    int min_given = 0;    // how many of the arguments a step must give (e.g. "scheme": exactly one)
    int max_given = 99;
    // What the command the action drives would refuse beyond each argument's type and range (the
    // search's options and limits, by the search's own checks); throws InputError. May be empty.
    std::function<void(const JsonPath& action)> check = nullptr;
};
const std::vector<TourActionSpec>& tourActionSpecs();

// The parts of the window a "highlight" can point at (docs/TOURS.md); the GUI's driver finds each
// (test_tours: the driver's names are exactly these).
const std::vector<std::string>& tourHighlightTargets();

// Validates the whole document (format, fields, every action's name and arguments, each value as
// the command it drives would: known workspaces and highlight targets, the search's ranges) and
// throws an InputError naming the source, the JSON path and the reason.
Tour parseTour(const Json& j, const std::string& source, const std::string& id);
Tour readTourFile(const std::string& path);

std::vector<std::string> shippedTourNames();   // resources/tours/*.json, in their "order"
Tour shippedTour(const std::string& name);
// A shipped tour's name, or a path to a tour file (contains '/' or ends in .json).
Tour loadTour(const std::string& nameOrPath);

}  // namespace tinyscope
