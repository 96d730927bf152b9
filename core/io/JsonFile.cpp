#include "io/JsonFile.h"

#include "Error.h"
#include "io/AtomicFile.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tinyscope {

namespace {

// nlohmann's DOM builder behind a gate that counts depth and containers, so that a hostile
// document is refused while it is read instead of after it has taken the memory or the stack.
class BoundedSax {
public:
    BoundedSax(Json& root, const JsonLimits& limits) : dom_(root, false), limits_(limits) {}

    bool null() { return dom_.null(); }
    bool boolean(bool v) { return dom_.boolean(v); }
    bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
    bool number_float(Json::number_float_t v, const Json::string_t& s) { return dom_.number_float(v, s); }
    bool string(Json::string_t& v) { return dom_.string(v); }
    bool binary(Json::binary_t& v) { return dom_.binary(v); }
    bool key(Json::string_t& v) { return dom_.key(v); }
    bool start_object(std::size_t n) { return open() && dom_.start_object(n); }
    bool start_array(std::size_t n) { return open() && dom_.start_array(n); }
    bool end_object() { --depth_; return dom_.end_object(); }
    bool end_array() { --depth_; return dom_.end_array(); }
    template <class Exception>
    bool parse_error(std::size_t position, const std::string&, const Exception& e)
    {
        position_ = position;
        std::string what = e.what();
        // nlohmann prefixes "[json.exception.parse_error.101] parse error at line L, column C: "
        const auto colon = what.find(": ", what.find("parse error"));
        reason_ = "malformed JSON: " + (what.find("parse error") == std::string::npos || colon == std::string::npos
                                            ? what.substr(what.find(']') == std::string::npos ? 0 : what.find(']') + 2)
                                            : what.substr(colon + 2));
        return false;
    }

    std::size_t position() const { return position_; }
    const std::string& reason() const { return reason_; }

private:
    bool open()
    {
        if (++depth_ > limits_.max_depth) {
            reason_ = "nested deeper than " + std::to_string(limits_.max_depth) + " levels";
            return false;
        }
        if (++containers_ > limits_.max_containers) {
            reason_ = "more than " + std::to_string(limits_.max_containers) + " objects and arrays";
            return false;
        }
        return true;
    }

    nlohmann::detail::json_sax_dom_parser<Json> dom_;
    JsonLimits limits_;
    int depth_ = 0;
    std::size_t containers_ = 0;
    std::size_t position_ = std::string::npos;
    std::string reason_;
};

// Line and column of byte `offset` (1-based), as editors count them.
std::string lineColumn(const std::string& text, std::size_t offset)
{
    std::size_t line = 1, col = 1;
    const std::size_t end = std::min(offset, text.size());
    for (std::size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// Offset of the '[' or '{' that first goes deeper than the limit or is one container too many.
std::size_t limitOffset(const std::string& text, const JsonLimits& limits)
{
    int depth = 0;
    std::size_t containers = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limits.max_depth || ++containers > limits.max_containers) return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return 0;
}

}  // namespace

Json parseJson(const std::string& text, const std::string& source, const JsonLimits& limits)
{
    if (text.size() > limits.max_bytes)
        throw InputError(source + ": " + byteSizeText(text.size()) + ", more than the " + byteSizeText(limits.max_bytes) +
                         " a JSON file may have here");
    Json root;
    BoundedSax sax(root, limits);
    if (!Json::sax_parse(text, &sax)) {
        // Parse errors come with nlohmann's position (the byte after the offending one, 1-based);
        // a limit is located by scanning for the bracket that crossed it.
        const std::size_t at = sax.position() != std::string::npos ? (sax.position() == 0 ? 0 : sax.position() - 1)
                                                                      : limitOffset(text, limits);
        throw InputError(source + ": " + lineColumn(text, at) + ": " + sax.reason());
    }
    return root;
}

Json readJsonFile(const std::string& path, const JsonLimits& limits)
{
    return parseJson(readFileBytes(path, limits.max_bytes), path, limits);
}

std::string jsonBrief(const Json& v, std::size_t maxChars)
{
    if (v.is_array()) return "an array of " + std::to_string(v.size()) + (v.size() == 1 ? " value" : " values");
    if (v.is_object()) return "an object with " + std::to_string(v.size()) + (v.size() == 1 ? " key" : " keys");
    std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (s.size() > maxChars) s = s.substr(0, maxChars) + (v.is_string() ? "...\"" : "...");
    return s;
}

void writeJsonFile(const std::string& path, const Json& value, int indent)
{
    writeFileAtomic(path, value.dump(indent) + "\n");
}

namespace {
std::string typeName(const Json& j)
{
    return j.type_name();
}
}  // namespace

std::string JsonPath::where() const
{
    return path_.empty() ? source_ : source_ + ": " + path_;
}

void JsonPath::fail(const std::string& reason) const
{
    throw InputError(where() + ": " + reason);
}

bool JsonPath::has(const char* key) const
{
    return node_->is_object() && node_->contains(key);
}

JsonPath JsonPath::operator[](const char* key) const
{
    if (!node_->is_object())
        fail(std::string("expected an object, got ") + typeName(*node_));
    auto it = node_->find(key);
    std::string p = path_.empty() ? std::string(key) : path_ + "." + key;
    if (it == node_->end())
        throw InputError(source_ + ": missing field '" + p + "'");
    return JsonPath(source_, p, *it);
}

JsonPath JsonPath::operator[](std::size_t index) const
{
    std::size_t n = size();
    std::string p = path_ + "[" + std::to_string(index) + "]";
    if (index >= n)
        throw InputError(source_ + ": " + p + ": index out of range (size " + std::to_string(n) + ")");
    return JsonPath(source_, p, (*node_)[index]);
}

std::size_t JsonPath::size() const
{
    if (!node_->is_array())
        fail(std::string("expected an array, got ") + typeName(*node_));
    return node_->size();
}

long long JsonPath::asInt64() const
{
    if (node_->is_number_unsigned() && node_->get<Json::number_unsigned_t>() > static_cast<Json::number_unsigned_t>(std::numeric_limits<long long>::max()))
        fail("integer out of range: " + jsonBrief(*node_));
    if (node_->is_number_integer())
        return node_->get<long long>();
    if (node_->is_number_float()) {
        double v = node_->get<double>();
        if (std::floor(v) == v && std::fabs(v) < 9.0e15)
            return static_cast<long long>(v);
        fail("expected an integer, got " + jsonBrief(*node_));
    }
    fail("expected an integer, got " + jsonBrief(*node_));
}

int JsonPath::asInt() const
{
    long long v = asInt64();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
        fail("integer out of range: " + std::to_string(v));
    return static_cast<int>(v);
}

long long JsonPath::asInt64In(long long lo, long long hi) const
{
    const long long v = asInt64();
    if (v < lo || v > hi) fail("must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(v));
    return v;
}

int JsonPath::asIntIn(int lo, int hi) const
{
    return static_cast<int>(asInt64In(lo, hi));
}

double JsonPath::asDoubleIn(double lo, double hi) const
{
    const double v = asDouble();
    if (!(v >= lo && v <= hi)) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "must be in %g..%g, got %g", lo, hi, v);
        fail(buf);
    }
    return v;
}

double JsonPath::asDouble() const
{
    if (!node_->is_number())
        fail("expected a number, got " + jsonBrief(*node_));
    return node_->get<double>();
}

bool JsonPath::asBool() const
{
    if (!node_->is_boolean())
        fail("expected true or false, got " + jsonBrief(*node_));
    return node_->get<bool>();
}

std::string JsonPath::asString() const
{
    if (!node_->is_string())
        fail("expected a string, got " + jsonBrief(*node_));
    return node_->get<std::string>();
}

std::vector<int> JsonPath::asIntList() const
{
    std::vector<int> out(size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = (*this)[i].asInt();
    return out;
}

std::vector<double> JsonPath::asDoubleList() const
{
    std::vector<double> out(size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = (*this)[i].asDouble();
    return out;
}

}  // namespace tinyscope
