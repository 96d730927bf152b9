#include "graph/PublishedSchemes.h"
#include "graph/TrainingBudget.h"

#include "Error.h"
#include "io/DataPaths.h"
#include "zoo/Network.h"

#include <cstdlib>

namespace tinyscope {

namespace {

PublishedScheme entry(const char* model, const char* name, int nBias, std::vector<int> idx, std::vector<double> ratio,
                      const char* kind = "published")
{
    PublishedScheme p;
    p.model = model;
    p.name = name;
    p.kind = kind;
    p.scheme.n_bias_update = nBias;
    p.scheme.manual_weight_idx = std::move(idx);
    p.scheme.weight_update_ratio = std::move(ratio);
    return p;
}

constexpr double E = 0.125, Q = 0.25, H = 0.5;

}  // namespace

const std::vector<PublishedScheme>& publishedSchemes()
{
    static const std::vector<PublishedScheme> all = [] {
        std::vector<PublishedScheme> v = {
            entry("mbv2-w0.35", "49kb", 16, {36, 39, 40, 41, 42, 45, 48, 49}, {1, 1, 0, Q, E, E, E, E}),
            entry("mbv2-w0.35", "73kb", 20, {32, 33, 36, 39, 41, 42, 45, 48}, {E, H, H, 1, Q, E, E, 1}),
            entry("mbv2-w0.35", "99kb", 25, {27, 30, 33, 36, 39, 42, 45, 48}, {1, 1, 1, 1, 1, E, H, 1}),
            entry("mbv2-w0.35", "123kb", 31, {27, 30, 33, 36, 39, 42, 45, 48}, {1, 1, 1, 1, 1, H, 1, 1}),
            entry("mbv2-w0.35", "138kb", 34, {27, 30, 33, 36, 39, 42, 45, 48}, {1, 1, 1, 1, 1, 1, 1, 1}),
            entry("mcunet-5fps", "49kb", 20, {23, 24, 27, 30, 33, 39}, {0, Q, H, H, 0, 0}),
            entry("mcunet-5fps", "74kb", 21, {21, 23, 24, 26, 27, 30}, {1, 0, 1, 0, H, 1}),
            entry("mcunet-5fps", "99kb", 22, {21, 24, 27, 30, 36, 39}, {1, 1, 1, 1, E, Q}),
            entry("mcunet-5fps", "124kb", 24, {21, 24, 27, 30, 33, 39}, {Q, 1, 1, 1, H, H}),
            entry("mcunet-5fps", "148kb", 23, {21, 24, 27, 30, 36, 39}, {1, 1, 1, 1, 1, H}),
            entry("proxyless-w0.3", "49kb", 21, {39, 42, 44, 45, 50, 51, 54, 57}, {Q, 1, 0, 1, 0, E, Q, Q}),
            entry("proxyless-w0.3", "74kb", 28, {33, 36, 39, 42, 45, 51, 54, 57}, {H, Q, 1, 1, 1, H, Q, H}),
            entry("proxyless-w0.3", "98kb", 25, {36, 39, 42, 45, 48, 51, 54, 57}, {1, H, 1, 1, Q, H, 1, 1}),
            entry("proxyless-w0.3", "120kb", 32, {36, 39, 42, 45, 48, 51, 54, 57}, {1, 1, 1, 1, H, 1, 1, 1}),
            entry("proxyless-w0.3", "148kb", 45, {36, 39, 42, 45, 48, 51, 54, 57}, {1, 1, 1, 1, 1, 1, 1, 1}),
        };
        // algorithm/README.md: "--n_bias_update 12 --n_weight_update 12" (all channels) = 448 KB.
        PublishedScheme last12 = entry("mcunet-5fps", "readme_last12_layers", 12, {}, {}, "readme_reference");
        last12.scheme.n_weight_update = 12;
        v.push_back(last12);
        return v;
    }();
    return all;
}

std::vector<PublishedScheme> publishedSchemesFor(const std::string& model)
{
    std::vector<PublishedScheme> out;
    for (const PublishedScheme& p : publishedSchemes())
        if (p.model == model) out.push_back(p);
    return out;
}

SparseScheme schemeByName(const std::string& name, const Network* model)
{
    for (const PublishedScheme& p : publishedSchemes())
        if (name == p.id() || (model && model->name == p.model && name == p.name)) return p.scheme;

    // A pattern of several terms or with pw1 weights (graph/TrainingBudget.h), as search reports them.
    if (model && (name.find('+') != std::string::npos || name.rfind("pw1:", 0) == 0))
        return TrainingSchemePattern::parse(name).schemeFor(*model);
    auto count = [&](const std::string& text) {
        char* end = nullptr;
        long v = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || v < 0 || v > 100000)
            throw InputError("scheme '" + name + "': '" + text + "' is not a layer count");
        return static_cast<int>(v);
    };
    if (name == "classifier") return SparseScheme::biasOnly(0);
    if (name == "bias-only") {
        SparseScheme s;
        s.n_bias_update = -1;
        return s;
    }
    if (name.rfind("bias-only:", 0) == 0) return SparseScheme::biasOnly(count(name.substr(10)));
    if (model && name == "full") return SparseScheme::full(*model);
    if (model && name.rfind("last:", 0) == 0) return SparseScheme::lastLayers(*model, count(name.substr(5)));

    std::string list;
    for (const PublishedScheme& p : publishedSchemes()) list += (list.empty() ? "" : ", ") + p.id();
    throw InputError("unknown scheme '" + name + "' (not a file; published: " + list +
                     "; patterns: bias-only, bias-only:N, last:K, full, classifier, pw1:K@R, TERM+TERM)");
}

SparseScheme loadScheme(const std::string& spec, const Network* model)
{
    if (fileExists(spec)) return SparseScheme::loadFile(spec);
    return schemeByName(spec, model);
}

}  // namespace tinyscope
