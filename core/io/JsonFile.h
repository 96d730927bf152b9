#pragma once
// Reading JSON files and fields with messages that name the file, the field path and the reason.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tinyscope {

using Json = nlohmann::json;

// What a JSON reader accepts. Every document is bounded: nesting depth (deep documents would
// exhaust the stack of anything recursive that touches them later: dump, comparison, copies),
// containers (each object or array allocates; 100 MB of "{}" would take gigabytes) and file size.
struct JsonLimits {
    int max_depth = 64;
    std::size_t max_containers = 2'000'000;
    std::size_t max_bytes = 64u << 20;
};

// Parses `text`; a syntax error or a document beyond `limits` becomes an InputError
// "<source>: line L, column C: <reason>".
Json parseJson(const std::string& text, const std::string& source, const JsonLimits& limits = {});

// Reads and parses a file; unreadable files, files over limits.max_bytes and syntax errors become
// InputErrors naming the file.
Json readJsonFile(const std::string& path, const JsonLimits& limits = {});

// A short, bounded description of a value for messages: scalars as JSON (strings cut to
// `maxChars`), containers as "an array of 3 values" / "an object with 2 keys".
std::string jsonBrief(const Json& value, std::size_t maxChars = 60);

// Serialises `value` (indented) and writes it atomically.
void writeJsonFile(const std::string& path, const Json& value, int indent = 2);

// A position inside a JSON document, used to build messages such as
// "space.json: widths[1].stages: expected 6 integers, got 5".
class JsonPath {
public:
    JsonPath(std::string source, const Json& node) : source_(std::move(source)), node_(&node) {}

    const Json& node() const { return *node_; }
    const std::string& source() const { return source_; }
    std::string where() const;                      // "<source>: <path>" (or just source at the root)
    [[noreturn]] void fail(const std::string& reason) const;

    bool has(const char* key) const;
    JsonPath operator[](const char* key) const;     // required object member
    JsonPath operator[](std::size_t index) const;   // required array element
    std::size_t size() const;                       // array length; fails if not an array

    int asInt() const;
    long long asInt64() const;
    double asDouble() const;
    // The same within [lo, hi] ("must be in 1..65536, got 0").
    int asIntIn(int lo, int hi) const;
    long long asInt64In(long long lo, long long hi) const;
    double asDoubleIn(double lo, double hi) const;
    bool asBool() const;
    std::string asString() const;
    std::vector<int> asIntList() const;
    std::vector<double> asDoubleList() const;

private:
    JsonPath(std::string source, std::string path, const Json& node)
        : source_(std::move(source)), path_(std::move(path)), node_(&node) {}
    std::string source_;
    std::string path_;
    const Json* node_;
};

}  // namespace tinyscope
