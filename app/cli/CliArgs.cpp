#include "cli/CliArgs.h"

#include "Error.h"
#include "io/Text.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tinyscope::cli {

namespace {

// Every option is given at most once: with "--epochs 1 … --epochs 50" (a script's default and a
// user's override) it is not clear which one the user meant, so neither is taken.
InputError givenTwice(const std::string& name) { return InputError("option --" + name + " is given twice; give it once"); }

}  // namespace

CliArgs::CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valued,
                 const std::set<std::string>& flags)
{
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

}  // namespace tinyscope::cli
