#pragma once
// A small command-line parser: positionals plus --options, each command declaring what it
// accepts, so that a typo is an error ("unknown option --macz") rather than silently ignored, and
// an option given twice is an error rather than one of the two values silently winning.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tinyscope::cli {

// Ranges shared by many commands.
constexpr long long kMaxSeed = 9223372036854775807LL;   // seeds are 0..2^63-1
constexpr int kMaxThreads = 256;
constexpr long long kMaxImages = 1'000'000'000LL;
constexpr int kMaxBatch = 65536;

class CliArgs {
public:
    // `valued`: options that take a value; `flags`: options without one.
    CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valued, const std::set<std::string>& flags);

    bool flag(const std::string& name) const { return flags_.count(name) > 0; }
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string value(const std::string& name, const std::string& fallback = "") const;
    // Numbers always come with the range the command accepts: "--batch -1" or "--print-every 0"
    // is refused with the range instead of running with a value nothing was meant for. The
    // fallback (used when the option is absent) is not range-checked.
    int intValue(const std::string& name, int fallback, int min, int max) const;
    long long int64Value(const std::string& name, long long fallback, long long min, long long max) const;
    double doubleValue(const std::string& name, double fallback, double min, double max) const;
    const std::vector<std::string>& positionals() const { return positionals_; }

private:
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
    std::vector<std::string> positionals_;
};

// The entries of a comma-separated list option (--schemes S1,S2,…), none when it is absent: an
// empty entry (",", "a,,b") is refused, not skipped — "--schemes ," would otherwise be an empty
// table with exit 0.
std::vector<std::string> listOption(const CliArgs& a, const std::string& name);

// An option cannot exist without help or the reverse: every CliArgs records the options it accepts,
// and the dispatcher (Cli.cpp) checks a command's --help text against them. takeDeclaredOptions()
// returns (and forgets) what this thread's CliArgs declared since the last call.
std::set<std::string> takeDeclaredOptions();
// What is wrong with `help` for a command accepting `declared`: an option the text never names
// ("--x"), or one the usage lines (from "usage:" to the first line indented by exactly two
// spaces or the first blank line) name that the command does not accept. Empty when it agrees.
std::vector<std::string> helpProblems(const std::string& help, const std::set<std::string>& declared);

}  // namespace tinyscope::cli
