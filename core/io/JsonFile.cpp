#include "io/JsonFile.h"

#include "Error.h"
#include "io/AtomicFile.h"

#include <cmath>
#include <limits>

namespace tinyscope {

Json parseJson(const std::string& text, const std::string& source)
{
    try {
        return Json::parse(text);
    } catch (const Json::parse_error& e) {
        std::size_t line = 1, col = 1;
        std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        for (std::size_t i = 0; i < end; ++i) {
            if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
        }
        std::string what = e.what();
        // nlohmann prefixes "[json.exception.parse_error.101] parse error at line L, column C: "
        auto colon = what.find(": ", what.find("parse error"));
        std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
        throw InputError(source + ": line " + std::to_string(line) + ", column " + std::to_string(col) +
                         ": malformed JSON: " + reason);
    }
}

Json readJsonFile(const std::string& path)
{
    return parseJson(readFileBytes(path), path);
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
    if (node_->is_number_integer())
        return node_->get<long long>();
    if (node_->is_number_float()) {
        double v = node_->get<double>();
        if (std::floor(v) == v && std::fabs(v) < 9.0e15)
            return static_cast<long long>(v);
        fail("expected an integer, got " + node_->dump());
    }
    fail("expected an integer, got " + std::string(typeName(*node_)) + " " + node_->dump());
}

int JsonPath::asInt() const
{
    long long v = asInt64();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
        fail("integer out of range: " + std::to_string(v));
    return static_cast<int>(v);
}

double JsonPath::asDouble() const
{
    if (!node_->is_number())
        fail("expected a number, got " + std::string(typeName(*node_)) + " " + node_->dump());
    return node_->get<double>();
}

bool JsonPath::asBool() const
{
    if (!node_->is_boolean())
        fail("expected true or false, got " + node_->dump());
    return node_->get<bool>();
}

std::string JsonPath::asString() const
{
    if (!node_->is_string())
        fail("expected a string, got " + std::string(typeName(*node_)) + " " + node_->dump());
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
