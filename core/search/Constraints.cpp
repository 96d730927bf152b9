#include "search/Constraints.h"

#include "Error.h"

#include <cmath>
#include <cstdio>

namespace tinyscope {

std::string formatQuantity(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

std::string formatQuantityKB(std::int64_t bytes) { return formatQuantity(static_cast<double>(bytes) / 1024.0) + " KB"; }

std::string Limit::describe() const
{
    return quantity->label + " ≤ " + formatQuantity(max) + (quantity->unit.empty() ? "" : " " + quantity->unit);
}

const std::vector<std::shared_ptr<const ConstraintQuantity>>& Constraints::builtinQuantities()
{
    static const std::vector<std::shared_ptr<const ConstraintQuantity>> all = [] {
        std::vector<std::shared_ptr<const ConstraintQuantity>> v;
        auto add = [&v](const char* key, const char* label, const char* unit, double (*f)(const CostSummary&)) {
            auto q = std::make_shared<ConstraintQuantity>();
            q->key = key;
            q->label = label;
            q->unit = unit;
            q->measure = [f](const SubnetConfig&, const CostSummary& s) { return f(s); };
            v.push_back(q);
        };
        add("millionMACs", "MACs", "M", [](const CostSummary& s) { return s.millionMacs(); });
        add("KBPeakMemory", "peak SRAM", "KB", [](const CostSummary& s) { return s.peakKB(); });
        add("params", "params", "", [](const CostSummary& s) { return static_cast<double>(s.params); });
        add("KBFlash", "flash", "KB", [](const CostSummary& s) { return s.flashKB(); });
        return v;
    }();
    return all;
}

std::shared_ptr<const ConstraintQuantity> Constraints::builtinQuantity(const std::string& key)
{
    for (const auto& q : builtinQuantities())
        if (q->key == key) return q;
    return nullptr;
}

namespace {
std::string knownKeys()
{
    std::string s;
    for (const auto& q : Constraints::builtinQuantities()) s += (s.empty() ? "" : ", ") + q->key;
    return s;
}

void checkLimitValue(const std::string& where, double max)
{
    if (!std::isfinite(max) || max <= 0)
        throw InputError(where + ": a limit must be a positive number, got " + formatQuantity(max));
}
}  // namespace

void Constraints::set(const std::string& key, double max)
{
    auto q = builtinQuantity(key);
    if (!q) throw InputError("unknown constraint '" + key + "' (known: " + knownKeys() + ")");
    set(q, max);
}

void Constraints::set(std::shared_ptr<const ConstraintQuantity> quantity, double max)
{
    checkLimitValue(quantity->key, max);
    for (Limit& l : limits_) {
        if (l.key() == quantity->key) {
            l = Limit{std::move(quantity), max};
            return;
        }
    }
    limits_.push_back(Limit{std::move(quantity), max});
}

void Constraints::remove(const std::string& key)
{
    for (auto it = limits_.begin(); it != limits_.end(); ++it) {
        if (it->key() == key) {
            limits_.erase(it);
            return;
        }
    }
}

const Limit* Constraints::find(const std::string& key) const
{
    for (const Limit& l : limits_)
        if (l.key() == key) return &l;
    return nullptr;
}

Constraints Constraints::fromJson(const Json& j, const std::string& source)
{
    JsonPath p(source, j);
    if (!j.is_object()) p.fail("expected an object of limits such as {\"millionMACs\": 60, \"KBPeakMemory\": 250}");
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (!builtinQuantity(it.key()))
            throw InputError(source + ": unknown constraint '" + it.key() + "' (known: " + knownKeys() + ")");
        if (!it.value().is_number())
            throw InputError(source + ": " + it.key() + ": expected a number, got " + jsonBrief(it.value()));
        checkLimitValue(source + ": " + it.key(), it.value().get<double>());
    }
    Constraints c;   // in the built-in order, whatever the file's key order
    for (const auto& q : builtinQuantities())
        if (j.contains(q->key)) c.set(q, j[q->key].get<double>());
    return c;
}

Json Constraints::toJson() const
{
    Json j = Json::object();
    for (const Limit& l : limits_) j[l.key()] = l.max;
    return j;
}

Json Constraints::definitions() const
{
    Json j = Json::object();
    for (const Limit& l : limits_)
        if (!l.quantity->definition.is_null()) j[l.key()] = l.quantity->definition;
    return j;
}

bool Constraints::satisfiedBy(const SubnetConfig& config, const CostSummary& cost) const
{
    for (const Limit& l : limits_)
        if (l.quantity->measure(config, cost) > l.max) return false;
    return true;
}

std::string Constraints::describe() const
{
    if (limits_.empty()) return "no limits";
    std::string s;
    for (const Limit& l : limits_) s += (s.empty() ? "" : ", ") + l.describe();
    return s;
}

}  // namespace tinyscope
