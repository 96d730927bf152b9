#include "cli/CliArgs.h"

#include "Error.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tinyscope::cli {

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
                values_.emplace(name, val);
            } else if (flags.count(name)) {
                if (inlineValue) throw InputError("option --" + name + " takes no value");
                flags_.insert(name);
            } else {
                std::string known;
                for (const auto& v : valued) known += " --" + v;
                for (const auto& f : flags) known += " --" + f;
                throw InputError("unknown option --" + name + (known.empty() ? "" : " (accepted:" + known + ")"));
            }
        } else {
            positionals_.push_back(a);
        }
    }
}

std::string CliArgs::value(const std::string& name, const std::string& fallback) const
{
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    auto range = values_.equal_range(name);
    std::string last = fallback;
    for (auto r = range.first; r != range.second; ++r) last = r->second;
    return last;
}

std::vector<std::string> CliArgs::values(const std::string& name) const
{
    std::vector<std::string> out;
    auto range = values_.equal_range(name);
    for (auto r = range.first; r != range.second; ++r) out.push_back(r->second);
    return out;
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
        throw InputError("option --" + name + ": expected an integer in " + range + ", got '" + v.substr(0, 40) + "'");
    if (x < min || x > max) throw InputError("option --" + name + ": expected an integer in " + range + ", got " + v);
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
        throw InputError("option --" + name + ": expected a number in " + range + ", got '" + v.substr(0, 40) + "'");
    if (x < min || x > max) throw InputError("option --" + name + ": expected a number in " + range + ", got " + v);
    return x;
}

}  // namespace tinyscope::cli
