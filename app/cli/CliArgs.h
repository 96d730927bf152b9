#pragma once
// A small command-line parser: positionals plus --options, each command declaring what it
// accepts, so that a typo is an error ("unknown option --macz") rather than silently ignored.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tinyscope::cli {

class CliArgs {
public:
    // `valued`: options that take a value; `flags`: options without one.
    CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valued, const std::set<std::string>& flags);

    bool flag(const std::string& name) const { return flags_.count(name) > 0; }
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string value(const std::string& name, const std::string& fallback = "") const;
    std::vector<std::string> values(const std::string& name) const;   // repeated option
    int intValue(const std::string& name, int fallback) const;
    long long int64Value(const std::string& name, long long fallback) const;
    double doubleValue(const std::string& name, double fallback) const;
    const std::vector<std::string>& positionals() const { return positionals_; }

private:
    std::multimap<std::string, std::string> values_;
    std::set<std::string> flags_;
    std::vector<std::string> positionals_;
};

}  // namespace tinyscope::cli
