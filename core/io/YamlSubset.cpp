#include "io/YamlSubset.h"

#include "Error.h"
#include "io/AtomicFile.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <vector>

namespace tinyscope {

namespace {

struct Line {
    int number = 0;    // 1-based
    int indent = 0;
    std::string text;  // without indentation and comment
};

// Offset of the first byte that is not part of a well-formed UTF-8 sequence, or npos.
std::size_t invalidUtf8At(const std::string& s)
{
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 && c >= 0xC2 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E && c <= 0xF4 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return i;
        for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
        // No overlong forms, surrogates or code points above U+10FFFF (RFC 3629), as JSON requires.
        const unsigned char d = static_cast<unsigned char>(n > 1 ? s[i + 1] : 0);
        if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) || (c == 0xF4 && d > 0x8F)) return i;
        i += n;
    }
    return std::string::npos;
}

[[noreturn]] void fail(const std::string& source, int line, const std::string& why)
{
    throw InputError(source + ": line " + std::to_string(line) + ": " + why);
}

// The first position outside quotes where `at(s, i)` holds, or npos.
template <typename Pred>
std::size_t findUnquoted(const std::string& s, Pred at)
{
    char quote = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (at(s, i)) {
            return i;
        }
    }
    return std::string::npos;
}

// Removes a comment ('#' at the start or after whitespace, outside quotes).
std::string stripComment(const std::string& s)
{
    const std::size_t i = findUnquoted(s, [](const std::string& t, std::size_t k) {
        return t[k] == '#' && (k == 0 || std::isspace(static_cast<unsigned char>(t[k - 1])));
    });
    return i == std::string::npos ? s : s.substr(0, i);
}

std::string trim(const std::string& s)
{
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

bool isInteger(const std::string& s)
{
    std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i >= s.size()) return false;
    for (; i < s.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
}

bool isFloat(const std::string& s)
{
    // PyYAML (YAML 1.1): digits with a '.' and an optional exponent, or .inf / .nan.
    static const char* special[] = {".inf", "-.inf", "+.inf", ".nan", ".Inf", ".NaN", ".INF", ".NAN"};
    for (const char* sp : special)
        if (s == sp) return true;
    std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    bool digits = false, dot = false;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (std::isdigit(static_cast<unsigned char>(c))) digits = true;
        else if (c == '.' && !dot) dot = true;
        else if ((c == 'e' || c == 'E') && digits && dot) {
            std::size_t j = i + 1;
            if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
            if (j >= s.size()) return false;
            for (; j < s.size(); ++j)
                if (!std::isdigit(static_cast<unsigned char>(s[j]))) return false;
            return true;
        } else return false;
    }
    return digits && dot;
}

Json scalar(const std::string& raw, const std::string& source, int line)
{
    const std::string s = trim(raw);
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s.front() == '"' || s.front() == '\'') {
        if (s.size() < 2 || s.back() != s.front()) fail(source, line, "unterminated quoted string " + s);
        std::string v = s.substr(1, s.size() - 2);
        if (s.front() == '\'') {   // '' is an escaped quote
            std::string out;
            for (std::size_t i = 0; i < v.size(); ++i) {
                out += v[i];
                if (v[i] == '\'' && i + 1 < v.size() && v[i + 1] == '\'') ++i;
            }
            return out;
        }
        return parseJson(s, source + ": line " + std::to_string(line)).get<std::string>();
    }
    if (s.front() == '&' || s.front() == '*' || s.front() == '!' || s.front() == '|' || s.front() == '>' ||
        s.front() == '{')
        fail(source, line, "'" + s + "': anchors, tags, block scalars and flow mappings are not supported");
    static const char* trues[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char* falses[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    for (const char* t : trues)
        if (s == t) return true;
    for (const char* f : falses)
        if (s == f) return false;
    if (isInteger(s)) {
        errno = 0;
        long long v = std::strtoll(s.c_str(), nullptr, 10);
        if (errno == 0) return v;
    }
    if (isFloat(s)) {
        if (s.find("inf") != std::string::npos || s.find("Inf") != std::string::npos || s.find("INF") != std::string::npos)
            return s[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        if (s.find("nan") != std::string::npos || s.find("NaN") != std::string::npos || s.find("NAN") != std::string::npos)
            return std::numeric_limits<double>::quiet_NaN();
        return std::strtod(s.c_str(), nullptr);
    }
    return s;
}

Json flowSequence(const std::string& s, const std::string& source, int line)
{
    if (s.back() != ']') fail(source, line, "unterminated flow sequence " + s);
    Json out = Json::array();
    std::string inner = trim(s.substr(1, s.size() - 2));
    if (inner.empty()) return out;
    std::string item;
    char quote = 0;
    for (char c : inner) {
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '[' || c == '{') {
            fail(source, line, "nested flow collections are not supported");
        } else if (c == ',') {
            out.push_back(scalar(item, source, line));
            item.clear();
            continue;
        }
        item += c;
    }
    out.push_back(scalar(item, source, line));
    return out;
}

Json value(const std::string& s, const std::string& source, int line)
{
    const std::string t = trim(s);
    if (!t.empty() && t.front() == '[') return flowSequence(t, source, line);
    return scalar(t, source, line);
}

// Splits "key: value" at the first ': ' (or a trailing ':') outside quotes; false if none.
bool splitKey(const std::string& s, std::string& key, std::string& rest)
{
    const std::size_t i = findUnquoted(s, [](const std::string& t, std::size_t k) {
        return t[k] == ':' && (k + 1 == t.size() || t[k + 1] == ' ');
    });
    if (i == std::string::npos) return false;
    key = trim(s.substr(0, i));
    rest = i + 1 < s.size() ? s.substr(i + 1) : "";
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front()) key = key.substr(1, key.size() - 2);
    return true;
}

class Parser {
public:
    Parser(std::vector<Line> lines, std::string source) : lines_(std::move(lines)), source_(std::move(source)) {}

    Json document()
    {
        if (lines_.empty()) return Json::object();
        Json v = block(lines_[0].indent);
        if (pos_ < lines_.size()) fail(source_, lines_[pos_].number, "unexpected indentation");
        return v;
    }

private:
    Json block(int indent)
    {
        const Line& first = lines_[pos_];
        if (first.text == "-" || first.text.rfind("- ", 0) == 0) return sequence(indent);
        return mapping(indent);
    }

    Json mapping(int indent)
    {
        Json obj = Json::object();
        while (pos_ < lines_.size() && lines_[pos_].indent == indent) {
            const Line& l = lines_[pos_];
            std::string key, rest;
            if (!splitKey(l.text, key, rest)) fail(source_, l.number, "expected 'key: value', got '" + l.text + "'");
            if (obj.contains(key)) fail(source_, l.number, "duplicate key '" + key + "'");
            ++pos_;
            if (!trim(rest).empty()) {
                obj[key] = value(rest, source_, l.number);
            } else if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
                obj[key] = block(lines_[pos_].indent);
            } else if (pos_ < lines_.size() && lines_[pos_].indent == indent &&
                       (lines_[pos_].text == "-" || lines_[pos_].text.rfind("- ", 0) == 0)) {
                obj[key] = sequence(indent);   // "key:\n- a\n- b" at the same indentation
            } else {
                obj[key] = nullptr;
            }
        }
        if (pos_ < lines_.size() && lines_[pos_].indent > indent)
            fail(source_, lines_[pos_].number, "unexpected indentation");
        return obj;
    }

    Json sequence(int indent)
    {
        Json arr = Json::array();
        while (pos_ < lines_.size() && lines_[pos_].indent == indent &&
               (lines_[pos_].text == "-" || lines_[pos_].text.rfind("- ", 0) == 0)) {
            const Line& l = lines_[pos_];
            const std::string item = l.text.size() > 1 ? trim(l.text.substr(2)) : "";
            std::string key, rest;
            if (!item.empty() && item.front() != '[' && item.front() != '"' && item.front() != '\'' &&
                splitKey(item, key, rest))
                fail(source_, l.number, "mappings inside sequences are not supported");
            ++pos_;
            if (item.empty() && pos_ < lines_.size() && lines_[pos_].indent > indent) arr.push_back(block(lines_[pos_].indent));
            else arr.push_back(value(item, source_, l.number));
        }
        return arr;
    }

    std::vector<Line> lines_;
    std::string source_;
    std::size_t pos_ = 0;
};

}  // namespace

Json parseYamlSubset(const std::string& text, const std::string& source)
{
    std::vector<Line> lines;
    std::istringstream in(text);
    std::string raw;
    int number = 0;
    while (std::getline(in, raw)) {
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.pop_back();
        if (const std::size_t bad = invalidUtf8At(raw); bad != std::string::npos)
            fail(source, number, "byte " + std::to_string(bad + 1) + " is not UTF-8 text");
        const std::size_t firstText = raw.find_first_not_of(" \t");
        if (firstText != std::string::npos && raw.compare(0, firstText, std::string(firstText, ' ')) != 0 &&
            !trim(stripComment(raw)).empty())
            fail(source, number, "tabs are not allowed for indentation");
        std::string body = stripComment(raw);
        std::string t = trim(body);
        if (t.empty()) continue;
        if (t == "---" && lines.empty()) continue;
        if (t == "---" || t == "...") fail(source, number, "only one YAML document is supported");
        Line l;
        l.number = number;
        l.indent = static_cast<int>(body.find_first_not_of(' '));
        l.text = t;
        lines.push_back(std::move(l));
    }
    if (lines.size() == 1 && lines[0].text.find(": ") == std::string::npos && lines[0].text.back() != ':' &&
        lines[0].text.rfind("- ", 0) != 0)
        return value(lines[0].text, source, lines[0].number);   // a bare scalar document
    return Parser(std::move(lines), source).document();
}

Json readYamlFile(const std::string& path) { return parseYamlSubset(readFileBytes(path), path); }

namespace {

std::string yamlScalar(const Json& v)
{
    if (v.is_null()) return "null";
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number_float()) {
        std::string s = v.dump();
        // PyYAML reads "1" as an int and "1e-05" as a string: keep floats floats.
        if (s.find('.') == std::string::npos && s.find("inf") == std::string::npos && s.find("nan") == std::string::npos) {
            std::size_t e = s.find_first_of("eE");
            s = e == std::string::npos ? s + ".0" : s.substr(0, e) + ".0" + s.substr(e);
        }
        return s;
    }
    const std::string s = v.get<std::string>();
    // Plain only if PyYAML reads it back as this same string ("23-24-27" is; "-3", "yes" are not).
    bool plain = !s.empty() && s.find_first_of(":#[]{},&*!|>'\"%@`") == std::string::npos && s.front() != ' ' &&
                 s.back() != ' ' && s != "-" && s.rfind("- ", 0) != 0;
    if (plain) {
        try {
            const Json back = scalar(s, "", 0);
            plain = back.is_string() && back.get<std::string>() == s;
        } catch (const InputError&) {
            plain = false;
        }
    }
    return plain ? s : Json(s).dump();
}

void emit(std::ostringstream& out, const Json& obj, int indent)
{
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        out << std::string(static_cast<std::size_t>(indent), ' ') << it.key() << ":";
        const Json& v = it.value();
        if (v.is_object()) {
            out << "\n";
            emit(out, v, indent + 2);
        } else if (v.is_array()) {
            out << " [";
            for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << yamlScalar(v[i]);
            out << "]\n";
        } else {
            out << " " << yamlScalar(v) << "\n";
        }
    }
}

}  // namespace

std::string toYamlSubset(const Json& value)
{
    std::ostringstream out;
    if (value.is_object()) emit(out, value, 0);
    else out << yamlScalar(value) << "\n";
    return out.str();
}

}  // namespace tinyscope
