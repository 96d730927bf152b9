#include "tinyengine/TinyEngineNames.h"

#include "Error.h"
#include "io/Text.h"

namespace tinyscope {

namespace {

bool isAsciiLetter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isAsciiDigit(unsigned char c) { return c >= '0' && c <= '9'; }

// What character c at byte `at` is, in words, for the message.
std::string describe(unsigned char c, std::size_t at)
{
    std::string what;
    switch (c) {
    case '\n': what = "a newline"; break;
    case '\r': what = "a carriage return"; break;
    case ' ': what = "a space"; break;
    case '\t': what = "a tab"; break;
    case '"': what = "a double quote"; break;
    case '\'': what = "a quote"; break;
    case '#': what = "'#'"; break;
    case '/': what = "'/'"; break;
    case '*': what = "'*'"; break;
    case '\\': what = "a backslash"; break;
    default: what = "'" + escapedForMessage(std::string(1, static_cast<char>(c))) + "'";
    }
    return what + " at byte " + std::to_string(at);
}

}  // namespace

std::string tinyEngineNameProblem(const std::string& name, bool identifier)
{
    if (name.empty()) return "empty";
    if (name.size() > kMaxTinyEngineName)
        return std::to_string(name.size()) + " bytes, longer than " + std::to_string(kMaxTinyEngineName);
    for (std::size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        const bool ok = isAsciiLetter(c) || c == '_' || (i > 0 && isAsciiDigit(c)) ||
                        (!identifier && i > 0 && (c == '.' || c == '@' || c == '-'));
        if (!ok) return describe(c, i);
    }
    return {};
}

bool isTinyEngineIdentifier(const std::string& name) { return tinyEngineNameProblem(name, true).empty(); }
bool isTinyEngineLabel(const std::string& name) { return tinyEngineNameProblem(name, false).empty(); }

std::string tinyEngineNameRefusal(const std::string& name, bool identifier)
{
    const std::string problem = tinyEngineNameProblem(name, identifier);
    if (problem.empty()) return {};
    const char* grammar = identifier ? "a C identifier [A-Za-z_][A-Za-z0-9_]*"
                                     : "[A-Za-z_] then letters, digits, '_', '.', '@' or '-'";
    return "'" + escapedForMessage(name, 60) + "': not a name TinyEngine's code generator can emit safely (" + problem + "; expected " +
           grammar + ", at most " + std::to_string(kMaxTinyEngineName) + " bytes)";
}

void requireTinyEngineName(const std::string& name, bool identifier, const std::string& where, const std::string& what)
{
    const std::string refusal = tinyEngineNameRefusal(name, identifier);
    if (!refusal.empty()) throw InputError(where + ": " + what + " " + refusal);
}

}  // namespace tinyscope
