#include "graph/SparseScheme.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/YamlSubset.h"
#include "zoo/Network.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

namespace tinyscope {

namespace {

const char* kRatios = "0, 1/8, 1/4, 1/2, 1";

std::vector<std::string> splitDashes(const std::string& s)
{
    std::vector<std::string> out;
    std::string tok;
    for (char c : s) {
        if (c == '-') {
            out.push_back(tok);
            tok.clear();
        } else if (c != ' ') {
            tok += c;
        }
    }
    out.push_back(tok);
    return out;
}

int parseIndex(const std::string& text, const std::string& what)
{
    errno = 0;
    char* end = nullptr;
    long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || v < -1000000 || v > 1000000)
        throw InputError(what + ": '" + text + "' is not an integer");
    return static_cast<int>(v);
}

std::string ratioText(double r)
{
    std::ostringstream s;
    s.precision(12);
    s << r;
    return s.str();
}

// n_bias_update / n_weight_update: an integer or "all" (-1).
int countOrAll(const JsonPath& p)
{
    if (p.node().is_string()) {
        if (p.node().get<std::string>() == "all") return -1;
        p.fail("expected an integer or \"all\", got " + jsonBrief(p.node()));
    }
    if (p.node().is_null()) return 0;
    int v = p.asInt();
    if (v < 0) p.fail("must not be negative, got " + std::to_string(v));
    return v;
}

}  // namespace

double parseRatio(const std::string& text, const std::string& what)
{
    std::string t;
    for (char c : text)
        if (c != ' ') t += c;
    double v = 0;
    auto number = [&](const std::string& s, double& out) {
        errno = 0;
        char* end = nullptr;
        out = std::strtod(s.c_str(), &end);
        return !s.empty() && *end == '\0' && errno != ERANGE && std::isfinite(out);
    };
    auto slash = t.find('/');
    bool ok;
    if (slash != std::string::npos) {
        double a = 0, b = 0;
        ok = number(t.substr(0, slash), a) && number(t.substr(slash + 1), b) && b != 0;
        v = ok ? a / b : 0;
    } else {
        ok = number(t, v);
    }
    if (!ok || v < 0) throw InputError(what + ": '" + text + "' is not a ratio (one of " + kRatios + ")");
    return v;
}

std::string formatRatio(double r)
{
    if (std::fabs(r - 0.125) < 1e-12) return "1/8";
    if (std::fabs(r - 0.25) < 1e-12) return "1/4";
    if (std::fabs(r - 0.5) < 1e-12) return "1/2";
    return ratioText(r);
}

bool isAllowedRatio(double r)
{
    for (double a : {0.0, 0.125, 0.25, 0.5, 1.0})
        if (std::fabs(r - a) < 1e-9) return true;
    return false;
}

int updatedChannels(const Layer& c, double ratio, bool compilerRounding)
{
    if (c.groups > 1 && !c.depthwise()) return c.cin;
    const double exact = ratio * c.cin;
    return compilerRounding ? static_cast<int>(std::nearbyint(exact))   // half to even, as Python's round
                            : static_cast<int>(exact);
}

bool ResolvedScheme::anyKDiffersFromCompiler() const
{
    for (const ConvUpdate& c : convs)
        if (c.k != c.k_compiler) return true;
    return false;
}

bool SparseScheme::operator==(const SparseScheme& o) const
{
    return n_bias_update == o.n_bias_update && manual_weight_idx == o.manual_weight_idx &&
           weight_update_ratio == o.weight_update_ratio && n_weight_update == o.n_weight_update &&
           weight_select_criteria == o.weight_select_criteria && pw1_weight_only == o.pw1_weight_only;
}

SparseScheme SparseScheme::fromJson(const Json& j, const std::string& source)
{
    JsonPath root(source, j);
    if (!j.is_object()) root.fail("expected an object with the backward_config keys");
    const bool nested = j.contains("backward_config");
    JsonPath p = nested ? root["backward_config"] : root;
    if (!p.node().is_object()) p.fail("expected an object");
    static const std::set<std::string> known = {"enable_backward_config", "n_bias_update", "n_weight_update",
                                                "weight_update_ratio", "weight_select_criteria", "pw1_weight_only",
                                                "manual_weight_idx", "quantize_gradient", "freeze_fc", "train_scale"};
    if (nested || j.contains("n_bias_update")) {
        for (auto it = p.node().begin(); it != p.node().end(); ++it)
            if (!known.count(it.key()))
                p.fail("unknown key '" + it.key() +
                       "' (tiny-training's backward_config keys: n_bias_update, manual_weight_idx, weight_update_ratio, "
                       "n_weight_update, weight_select_criteria, pw1_weight_only, enable_backward_config, "
                       "quantize_gradient, freeze_fc, train_scale)");
    }
    if (!p.has("n_bias_update")) p.fail("missing key 'n_bias_update'");
    SparseScheme s;
    s.n_bias_update = countOrAll(p["n_bias_update"]);
    if (p.has("n_weight_update")) s.n_weight_update = countOrAll(p["n_weight_update"]);
    if (p.has("weight_select_criteria") && !p["weight_select_criteria"].node().is_null())
        s.weight_select_criteria = p["weight_select_criteria"].asString();
    if (p.has("pw1_weight_only")) {
        const Json& v = p["pw1_weight_only"].node();
        s.pw1_weight_only = v.is_boolean() ? v.get<bool>() : (v.is_null() ? false : p["pw1_weight_only"].asInt() != 0);
    }
    if (p.has("manual_weight_idx")) {
        JsonPath idx = p["manual_weight_idx"];
        const Json& v = idx.node();
        const std::string what = idx.where();
        if (v.is_null()) {
        } else if (v.is_number_integer()) {
            s.manual_weight_idx.push_back(idx.asInt());
        } else if (v.is_string()) {
            for (const std::string& t : splitDashes(v.get<std::string>())) s.manual_weight_idx.push_back(parseIndex(t, what));
        } else if (v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                JsonPath e = idx[i];
                s.manual_weight_idx.push_back(e.node().is_string() ? parseIndex(e.asString(), e.where()) : e.asInt());
            }
        } else {
            idx.fail("expected a list of conv indices or a dash-separated string, got " + jsonBrief(v));
        }
    }
    if (p.has("weight_update_ratio")) {
        JsonPath r = p["weight_update_ratio"];
        const Json& v = r.node();
        auto one = [&](const JsonPath& e) {
            return e.node().is_string() ? parseRatio(e.asString(), e.where()) : e.asDouble();
        };
        if (v.is_null()) {
        } else if (v.is_number()) {
            // A single number applies to every weight entry (tiny-training's behaviour).
            const double x = r.asDouble();
            const std::size_t n = s.manual_weight_idx.empty() ? 1 : s.manual_weight_idx.size();
            s.weight_update_ratio.assign(n, x);
        } else if (v.is_string()) {
            const std::string text = v.get<std::string>();
            if (text.find('-') == std::string::npos && !s.manual_weight_idx.empty()) {
                s.weight_update_ratio.assign(s.manual_weight_idx.size(), parseRatio(text, r.where()));
            } else {
                for (const std::string& t : splitDashes(text)) s.weight_update_ratio.push_back(parseRatio(t, r.where()));
            }
        } else if (v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i) s.weight_update_ratio.push_back(one(r[i]));
        } else {
            r.fail("expected a list of ratios or a dash-separated string, got " + jsonBrief(v));
        }
    }
    return s;
}

SparseScheme SparseScheme::loadFile(const std::string& path)
{
    const bool yaml = path.size() > 5 && (path.compare(path.size() - 5, 5, ".yaml") == 0 ||
                                          path.compare(path.size() - 4, 4, ".yml") == 0);
    return fromJson(yaml ? readYamlFile(path) : readJsonFile(path), path);
}

Json SparseScheme::toJson() const
{
    Json bc{{"enable_backward_config", 1},
            {"n_bias_update", n_bias_update < 0 ? Json("all") : Json(n_bias_update)},
            {"manual_weight_idx", manual_weight_idx},
            {"weight_update_ratio", weight_update_ratio},
            {"weight_select_criteria", weight_select_criteria},
            {"pw1_weight_only", pw1_weight_only ? 1 : 0}};
    if (manual_weight_idx.empty() && n_weight_update != 0)
        bc["n_weight_update"] = n_weight_update < 0 ? Json("all") : Json(n_weight_update);
    return Json{{"backward_config", bc}};
}

std::string SparseScheme::toYaml() const
{
    // tiny-training's parser splits str(value) on '-', so lists are written as dash strings
    // (a single entry as a plain number, which it also accepts).
    Json bc = toJson()["backward_config"];
    auto dashed = [](const std::vector<std::string>& parts) -> Json {
        if (parts.empty()) return nullptr;
        std::string s;
        for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "-" : "") + parts[i];
        return s;
    };
    std::vector<std::string> idx, ratio;
    for (int i : manual_weight_idx) idx.push_back(std::to_string(i));
    for (double r : weight_update_ratio) ratio.push_back(ratioText(r));
    bc["manual_weight_idx"] = idx.size() == 1 ? Json(manual_weight_idx[0]) : dashed(idx);
    bc["weight_update_ratio"] = ratio.size() == 1 ? Json(weight_update_ratio[0]) : dashed(ratio);
    return "# sparse-update scheme (tiny-training backward_config), written by tinyscope\n" +
           toYamlSubset(Json{{"backward_config", bc}});
}

void SparseScheme::saveFile(const std::string& path) const
{
    const bool yaml = path.size() > 5 && (path.compare(path.size() - 5, 5, ".yaml") == 0 ||
                                          path.compare(path.size() - 4, 4, ".yml") == 0);
    writeFileAtomic(path, yaml ? toYaml() : toJson().dump(2) + "\n");
}

ResolvedScheme SparseScheme::resolve(const Network& net, const std::string& source) const
{
    const int nb = net.numBackboneConvs();
    const std::string where = source + " (" + net.name + ", " + std::to_string(nb) + " backbone convs 0.." +
                              std::to_string(nb - 1) + ", classifier " + std::to_string(nb) + ")";
    ResolvedScheme r;
    r.n_bias_update = n_bias_update < 0 ? nb : n_bias_update;
    if (r.n_bias_update > nb)
        throw InputError(where + ": n_bias_update = " + std::to_string(n_bias_update) + " exceeds the " +
                         std::to_string(nb) + " backbone convs");
    const int tail = nb - r.n_bias_update;

    std::vector<int> idx = manual_weight_idx;
    std::vector<double> ratio = weight_update_ratio;
    if (idx.empty() && n_weight_update != 0) {
        const int nw = n_weight_update < 0 ? r.n_bias_update : n_weight_update;
        if (nw > nb) throw InputError(where + ": n_weight_update = " + std::to_string(nw) + " exceeds the backbone convs");
        for (int i = nb - nw; i < nb; ++i) idx.push_back(i);
        if (ratio.size() == 1) ratio.assign(idx.size(), ratio[0]);
    }
    if (ratio.empty()) ratio.assign(idx.size(), 1.0);   // no ratio: all input channels
    if (ratio.size() != idx.size())
        throw InputError(where + ": manual_weight_idx has " + std::to_string(idx.size()) +
                         " entries but weight_update_ratio has " + std::to_string(ratio.size()));
    if (pw1_weight_only) {
        std::vector<int> keepI;
        std::vector<double> keepR;
        for (std::size_t i = 0; i < idx.size(); ++i) {
            if (idx[i] < 0 || idx[i] >= nb) continue;
            const Layer& c = net.conv(idx[i]);
            if (c.cout > c.cin && c.kh == 1 && c.kw == 1) {   // tiny-training's _is_pw1
                keepI.push_back(idx[i]);
                keepR.push_back(ratio[i]);
            }
        }
        idx = keepI;
        ratio = keepR;
    }

    r.convs.assign(static_cast<std::size_t>(net.numConvs()), ConvUpdate{});
    for (int i = tail; i < nb; ++i) r.convs[static_cast<std::size_t>(i)].bias = true;
    std::set<int> seen;
    for (std::size_t e = 0; e < idx.size(); ++e) {
        const std::string entry = where + ": manual_weight_idx[" + std::to_string(e) + "] = " + std::to_string(idx[e]);
        if (idx[e] < 0 || idx[e] >= nb)
            throw InputError(entry + " is out of range (backbone convs are 0.." + std::to_string(nb - 1) +
                             "; the classifier is always updated)");
        if (!seen.insert(idx[e]).second) throw InputError(entry + " is listed twice");
        if (idx[e] < tail)
            throw InputError(entry + " lies outside the bias-updated tail (n_bias_update " +
                             std::to_string(r.n_bias_update) + " covers convs " + std::to_string(tail) + ".." +
                             std::to_string(nb - 1) + ")");
        const double q = ratio[e];
        if (!isAllowedRatio(q))
            throw InputError(where + ": weight_update_ratio[" + std::to_string(e) + "] = " + ratioText(q) +
                             " is not allowed (one of " + kRatios + ")");
        const Layer& c = net.conv(idx[e]);
        ConvUpdate& u = r.convs[static_cast<std::size_t>(idx[e])];
        u.ratio = q;
        if (q > 0) {
            u.k = updatedChannels(c, q);
            u.k_compiler = updatedChannels(c, q, true);
            if (u.k == 0)
                throw InputError(where + ": weight_update_ratio[" + std::to_string(e) + "] = " + formatRatio(q) +
                                 " selects no input channel of conv " + std::to_string(idx[e]) + " (" +
                                 std::to_string(c.cin) + " channels)");
        }
    }
    ConvUpdate& head = r.convs.back();
    head.bias = true;
    head.ratio = 1.0;
    head.k = head.k_compiler = net.head().cin;
    r.first_updated = nb;
    for (int i = 0; i < nb; ++i)
        if (r.convs[static_cast<std::size_t>(i)].bias || r.convs[static_cast<std::size_t>(i)].weight()) {
            r.first_updated = i;
            break;
        }
    return r;
}

SparseScheme SparseScheme::biasOnly(int n)
{
    SparseScheme s;
    s.n_bias_update = n;
    return s;
}

SparseScheme SparseScheme::lastLayers(const Network& net, int k)
{
    SparseScheme s;
    s.n_bias_update = k;
    const int nb = net.numBackboneConvs();
    for (int i = nb - k; i < nb; ++i) {
        s.manual_weight_idx.push_back(i);
        s.weight_update_ratio.push_back(1.0);
    }
    return s;
}

SparseScheme SparseScheme::full(const Network& net) { return lastLayers(net, net.numBackboneConvs()); }

}  // namespace tinyscope
