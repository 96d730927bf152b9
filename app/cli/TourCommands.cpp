// tinyscope tour: the guided tours a lecturer writes or checks without opening the app
// (core/tour/Tour.h, docs/TOURS.md); the GUI plays them (Help → Tours).
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "tour/Tour.h"

#include <iostream>

namespace tinyscope::cli {

namespace {

void printTour(const Tour& t)
{
    std::cout << t.title << " (" << t.steps.size() << " steps)\n";
    if (!t.summary.empty()) std::cout << "  " << t.summary << "\n";
    for (std::size_t i = 0; i < t.steps.size(); ++i) {
        std::cout << "  " << i + 1 << ". " << t.steps[i].title;
        std::string sep = "  [";
        for (const TourAction& a : t.steps[i].actions) {
            std::cout << sep << a.action;
            for (const auto& [k, v] : a.args.items()) std::cout << " " << k << "=" << (v.is_string() ? v.get<std::string>() : v.dump());
            sep = "; ";
        }
        std::cout << (t.steps[i].actions.empty() ? "" : "]") << "\n";
    }
}

int cmdTour(const Args& argv)
{
    CliArgs a(argv, {}, {"json", "help"});
    const auto& pos = a.positionals();
    const bool ok = !pos.empty() && ((pos[0] == "list" && pos.size() == 1) || (pos[0] == "actions" && pos.size() == 1) ||
                                     ((pos[0] == "show" || pos[0] == "check") && pos.size() == 2));
    if (a.flag("help") || !ok) {
        std::cout << "usage: tinyscope tour list [--json]            the shipped tours\n"
                     "       tinyscope tour show NAME|FILE [--json]  a tour's steps and actions\n"
                     "       tinyscope tour check FILE               validate a tour file (exit 2 naming the field)\n"
                     "       tinyscope tour actions [--json]         the actions a step can take (docs/TOURS.md)\n"
                     "The GUI plays them: Help → Tours, or Help → Open tour file…\n";
        return a.flag("help") ? 0 : 2;
    }
    if (pos[0] == "actions") {
        Json all = Json::array();
        for (const TourActionSpec& s : tourActionSpecs()) {
            Json args = Json::array();
            for (const TourArgSpec& g : s.args) {
                Json arg{{"name", g.name}, {"type", g.type}, {"required", g.required}, {"meaning", g.meaning}};
                if (g.min) arg["min"] = *g.min;
                if (g.max) arg["max"] = *g.max;
                args.push_back(arg);
            }
            all.push_back({{"action", s.name}, {"meaning", s.meaning}, {"args", args}});
            if (a.flag("json")) continue;
            std::cout << s.name << ": " << s.meaning << "\n";
            for (const TourArgSpec& g : s.args)
                std::cout << "    " << g.name << " (" << g.type << (g.rangeText().empty() ? "" : ", " + g.rangeText())
                          << (g.required ? ", required" : "") << "): " << g.meaning << "\n";
        }
        if (a.flag("json")) std::cout << all.dump(2) << "\n";
        return 0;
    }
    if (pos[0] == "list") {
        Json all = Json::array();
        for (const std::string& name : shippedTourNames()) {
            const Tour t = shippedTour(name);
            all.push_back({{"name", name}, {"title", t.title}, {"steps", t.steps.size()}, {"summary", t.summary}});
            if (!a.flag("json")) std::cout << name << ": " << t.title << " (" << t.steps.size() << " steps)\n";
        }
        if (a.flag("json")) std::cout << all.dump(2) << "\n";
        return 0;
    }
    const Tour t = pos[0] == "check" ? readTourFile(pos[1]) : loadTour(pos[1]);
    if (a.flag("json")) {
        Json steps = Json::array();
        for (const TourStep& s : t.steps) {
            Json actions = Json::array();
            for (const TourAction& x : s.actions) {
                Json j = x.args;
                j["action"] = x.action;
                actions.push_back(j);
            }
            steps.push_back({{"title", s.title}, {"text", s.text}, {"do", actions}});
        }
        std::cout << Json{{"name", t.id}, {"title", t.title}, {"summary", t.summary}, {"steps", steps}}.dump(2) << "\n";
        return 0;
    }
    if (pos[0] == "check") std::cout << pos[1] << ": a valid tour. ";
    printTour(t);
    return 0;
}

}  // namespace

std::vector<Command> tourCommands()
{
    return {{"tour", "the guided tours: list, show, check a tour file, the actions a step can take", cmdTour}};
}

}  // namespace tinyscope::cli
