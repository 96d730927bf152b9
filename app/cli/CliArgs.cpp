#include "cli/CliArgs.h"

#include "Error.h"
#include "io/Text.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace tinyscope::cli {

namespace {

// Every option is given at most once: with "--epochs 1 … --epochs 50" (a script's default and a
// user's override) it is not clear which one the user meant, so neither is taken.
InputError givenTwice(const std::string& name) { return InputError("option --" + name + " is given twice; give it once"); }

thread_local std::set<std::string> declaredOptions;

bool isOptionChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// The --names in `text`.
std::set<std::string> optionsNamed(const std::string& text)
{
    std::set<std::string> names;
    for (std::size_t i = text.find("--"); i != std::string::npos; i = text.find("--", i + 2)) {
        if (i > 0 && (isOptionChar(text[i - 1]))) continue;
        std::size_t e = i + 2;
        while (e < text.size() && isOptionChar(text[e])) ++e;
        if (e > i + 2 && text[i + 2] != '-') names.insert(text.substr(i + 2, e - i - 2));
    }
    return names;
}

}  // namespace

CliArgs::CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valued,
                 const std::set<std::string>& flags)
{
    declaredOptions.insert(valued.begin(), valued.end());
    declaredOptions.insert(flags.begin(), flags.end());
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
            std::string name = a.substr(2), val;
            bool inlineValue = false;
            auto eq = name.find('=');
            if (eq != std::string::npos) {
                val = name.substr(eq + 1);
                name = name.substr(0, eq);
                inlineValue = true;
            }
            if (valued.count(name)) {
                if (!inlineValue) {
                    if (i + 1 >= args.size()) throw InputError("option --" + name + " needs a value");
                    val = args[++i];
                }
                if (!values_.emplace(name, val).second) throw givenTwice(name);
            } else if (flags.count(name)) {
                if (inlineValue) throw InputError("option --" + name + " takes no value");
                if (!flags_.insert(name).second) throw givenTwice(name);
            } else {
                std::string known;
                for (const auto& v : valued) known += " --" + v;
                for (const auto& f : flags) known += " --" + f;
                throw InputError("unknown option --" + escapedForMessage(name) + (known.empty() ? "" : " (accepted:" + known + ")"));
            }
        } else {
            positionals_.push_back(a);
        }
    }
}

std::string CliArgs::value(const std::string& name, const std::string& fallback) const
{
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

long long CliArgs::int64Value(const std::string& name, long long fallback, long long min, long long max) const
{
    if (!has(name)) return fallback;
    const std::string v = value(name);
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    const std::string range = std::to_string(min) + ".." + std::to_string(max);
    if (v.empty() || *end != '\0' || errno == ERANGE)
        throw InputError("option --" + name + ": expected an integer in " + range + ", got '" + escapedForMessage(v, 40) + "'");
    if (x < min || x > max) throw InputError("option --" + name + ": expected an integer in " + range + ", got " + escapedForMessage(v, 40));
    return x;
}

int CliArgs::intValue(const std::string& name, int fallback, int min, int max) const
{
    return static_cast<int>(int64Value(name, fallback, min, max));
}

double CliArgs::doubleValue(const std::string& name, double fallback, double min, double max) const
{
    if (!has(name)) return fallback;
    const std::string v = value(name);
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v.c_str(), &end);
    char range[96];
    std::snprintf(range, sizeof range, "%g..%g", min, max);
    if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x))
        throw InputError("option --" + name + ": expected a number in " + range + ", got '" + escapedForMessage(v, 40) + "'");
    if (x < min || x > max) throw InputError("option --" + name + ": expected a number in " + range + ", got " + escapedForMessage(v, 40));
    return x;
}

std::set<std::string> takeDeclaredOptions() { return std::exchange(declaredOptions, {}); }

std::vector<std::string> helpProblems(const std::string& help, const std::set<std::string>& declared)
{
    std::vector<std::string> problems;
    const std::set<std::string> named = optionsNamed(help);
    for (const std::string& o : declared)
        if (o != "help" && !named.count(o)) problems.push_back("the help does not name --" + o + ", which the command accepts");
    std::string usage;
    bool inUsage = false;
    std::size_t start = 0;
    while (start <= help.size()) {
        std::size_t end = help.find('\n', start);
        if (end == std::string::npos) end = help.size();
        const std::string line = help.substr(start, end - start);
        if (line.compare(0, 6, "usage:") == 0) inUsage = true;
        else if (line.empty() || (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ')) inUsage = false;
        if (inUsage) usage += line + "\n";
        start = end + 1;
    }
    for (const std::string& o : optionsNamed(usage))
        if (!declared.count(o)) problems.push_back("the usage names --" + o + ", which the command does not accept");
    return problems;
}

std::vector<std::string> listOption(const CliArgs& a, const std::string& name)
{
    std::vector<std::string> out;
    if (!a.has(name)) return out;
    const std::string text = a.value(name);
    for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (out.back().empty())
            throw InputError("--" + name + " '" + escapedForMessage(text) + "': entry " + std::to_string(out.size()) + " is empty (give S1,S2,…)");
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

}  // namespace tinyscope::cli
