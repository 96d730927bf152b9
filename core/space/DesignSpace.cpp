#include "space/DesignSpace.h"

#include "Error.h"
#include "io/Text.h"

#include <algorithm>
#include <cmath>

namespace tinyscope {

namespace {

// Sane ranges for every number of a space: far beyond any network for a microcontroller (or a
// phone), small enough that no cost of any subnet can overflow 64-bit arithmetic.
constexpr int kMaxResolution = 4096;
constexpr int kMaxKernel = 31;
constexpr int kMaxExpand = 64;
constexpr int kMaxDepthEntry = 32;
constexpr int kMaxChannels = 65536;
constexpr int kMaxClasses = 1'000'000;
constexpr double kMaxMacs = 4.0e18;   // int64 holds 9.2e18

int inRange(const JsonPath& p, int lo, int hi)
{
    const int v = p.asInt();
    if (v < lo || v > hi) p.fail("must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(v));
    return v;
}

std::vector<int> positiveListAllowingRepeats(const JsonPath& p, int hi)
{
    std::vector<int> v = p.asIntList();
    for (std::size_t i = 0; i < v.size(); ++i)
        if (v[i] <= 0 || v[i] > hi) p[i].fail("must be in 1.." + std::to_string(hi) + ", got " + std::to_string(v[i]));
    return v;
}

std::vector<int> positiveList(const JsonPath& p, int hi)
{
    std::vector<int> v = p.asIntList();
    if (v.empty()) p.fail("must not be empty");
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] <= 0 || v[i] > hi) p[i].fail("must be in 1.." + std::to_string(hi) + ", got " + std::to_string(v[i]));
        for (std::size_t j = 0; j < i; ++j)
            if (v[j] == v[i]) p[i].fail("duplicate value " + std::to_string(v[i]));
    }
    return v;
}

}  // namespace

DesignSpace DesignSpace::fromJson(const Json& j, const std::string& source)
{
    JsonPath root(source, j);
    DesignSpace s;
    s.name = root["name"].asString();
    if (root.has("family")) s.family = root["family"].asString();
    if (s.family != "mcunet")
        root["family"].fail("unsupported family '" + s.family + "' (supported: mcunet)");
    if (root.has("description")) s.description = root["description"].asString();
    s.n_classes = root["n_classes"].asInt();
    if (s.n_classes < 2) root["n_classes"].fail("need at least 2 classes, got " + std::to_string(s.n_classes));
    if (s.n_classes > kMaxClasses) root["n_classes"].fail("at most " + std::to_string(kMaxClasses) + " classes, got " + std::to_string(s.n_classes));
    if (root.has("class_names")) {
        JsonPath cn = root["class_names"];
        for (std::size_t i = 0; i < cn.size(); ++i) s.class_names.push_back(cn[i].asString());
        if (static_cast<int>(s.class_names.size()) != s.n_classes)
            cn.fail("expected " + std::to_string(s.n_classes) + " names, got " + std::to_string(s.class_names.size()));
    }
    s.resolutions = positiveList(root["resolutions"], kMaxResolution);
    s.ks_list = positiveList(root["ks_list"], kMaxKernel);
    for (std::size_t i = 0; i < s.ks_list.size(); ++i)
        if (s.ks_list[i] % 2 == 0) root["ks_list"][i].fail("kernel sizes must be odd, got " + std::to_string(s.ks_list[i]));
    s.expand_list = positiveList(root["expand_ratio_list"], kMaxExpand);
    {
        JsonPath dl = root["depth_list"];
        s.depth_list = dl.asIntList();
        if (s.depth_list.empty()) dl.fail("must not be empty");
        for (std::size_t i = 0; i < s.depth_list.size(); ++i)
            if (s.depth_list[i] < 0 || s.depth_list[i] > kMaxDepthEntry)
                dl[i].fail("must be in 0.." + std::to_string(kMaxDepthEntry) + ", got " + std::to_string(s.depth_list[i]));
    }

    JsonPath wl = root["widths"];
    if (wl.size() == 0) wl.fail("must list at least one width setting");
    for (std::size_t w = 0; w < wl.size(); ++w) {
        JsonPath e = wl[w];
        WidthSet ws;
        ws.first_conv = inRange(e["first_conv"], 1, kMaxChannels);
        ws.block0 = inRange(e["block0"], 1, kMaxChannels);
        ws.stages = positiveListAllowingRepeats(e["stages"], kMaxChannels);
        ws.feature_mix = inRange(e["feature_mix"], 1, kMaxChannels);
        s.widths.push_back(ws);
    }
    if (root.has("width_mult_list")) {
        s.width_mult_list = root["width_mult_list"].asDoubleList();
        if (s.width_mult_list.size() != s.widths.size())
            root["width_mult_list"].fail("expected " + std::to_string(s.widths.size()) +
                                         " entries (one per width setting), got " +
                                         std::to_string(s.width_mult_list.size()));
    } else {
        for (std::size_t w = 0; w < s.widths.size(); ++w) s.width_mult_list.push_back(static_cast<double>(w));
    }

    std::vector<int> strides = root["stage_strides"].asIntList();
    std::vector<int> base = root["base_depth"].asIntList();
    const std::size_t nst = strides.size();
    if (nst == 0) root["stage_strides"].fail("must not be empty");
    if (base.size() != nst)
        root["base_depth"].fail("expected " + std::to_string(nst) + " entries (one per stage), got " + std::to_string(base.size()));
    std::vector<bool> elastic(nst, true);
    if (root.has("elastic_depth")) {
        JsonPath ed = root["elastic_depth"];
        if (ed.size() != nst) ed.fail("expected " + std::to_string(nst) + " entries, got " + std::to_string(ed.size()));
        for (std::size_t i = 0; i < nst; ++i) elastic[i] = ed[i].asBool();
    }
    for (std::size_t w = 0; w < s.widths.size(); ++w)
        if (s.widths[w].stages.size() != nst)
            wl[w]["stages"].fail("expected " + std::to_string(nst) + " stage widths, got " +
                                 std::to_string(s.widths[w].stages.size()));
    int maxd = *std::max_element(s.depth_list.begin(), s.depth_list.end());
    JsonPath se = root["se_stages"];
    if (se.size() != nst) se.fail("expected " + std::to_string(nst) + " entries, got " + std::to_string(se.size()));
    for (std::size_t i = 0; i < nst; ++i) {
        StageSpec st;
        st.stride = strides[i];
        if (st.stride != 1 && st.stride != 2) root["stage_strides"][i].fail("stride must be 1 or 2");
        st.base_depth = base[i];
        if (st.base_depth < 1) root["base_depth"][i].fail("must be >= 1");
        st.elastic_depth = elastic[i];
        st.max_blocks = st.base_depth + (st.elastic_depth ? maxd : 0);
        JsonPath sp = se[i];
        if (sp.node().is_boolean()) {
            st.se.assign(static_cast<std::size_t>(st.max_blocks), sp.asBool());
        } else {
            if (sp.size() != static_cast<std::size_t>(st.max_blocks))
                sp.fail("expected " + std::to_string(st.max_blocks) + " flags (one per block of the stage), got " +
                        std::to_string(sp.size()));
            for (std::size_t b = 0; b < sp.size(); ++b) st.se.push_back(sp[b].asBool());
        }
        s.stages.push_back(st);
    }
    if (root.has("sampler_width_indices")) {
        s.sampler_width_indices = root["sampler_width_indices"].asIntList();
        for (std::size_t i = 0; i < s.sampler_width_indices.size(); ++i) {
            int w = s.sampler_width_indices[i];
            if (w < 0 || w >= s.numWidths())
                root["sampler_width_indices"][i].fail("width index " + std::to_string(w) + " out of range 0.." +
                                                      std::to_string(s.numWidths() - 1));
        }
    }
    if (s.sampler_width_indices.empty())
        for (int w = 0; w < s.numWidths(); ++w) s.sampler_width_indices.push_back(w);
    for (std::size_t w = 0; w < s.width_mult_list.size(); ++w)
        if (!std::isfinite(s.width_mult_list[w]) || std::fabs(s.width_mult_list[w]) > 1e6)
            root["width_mult_list"][w].fail("must be a finite number");
    if (root.has("bn_eps")) {
        s.bn_eps = root["bn_eps"].asDouble();
        if (!(s.bn_eps > 0 && s.bn_eps < 1)) root["bn_eps"].fail("must be in (0, 1)");
    }
    s.finalize(source);
    // An upper bound of the largest subnet's MACs (every block at the widest, largest kernel and
    // expansion, at the first resolution's size): refuse spaces whose costs would not fit 64 bits.
    double widest = 0;
    for (const WidthSet& w : s.widths) {
        widest = std::max({widest, static_cast<double>(w.first_conv), static_cast<double>(w.block0), static_cast<double>(w.feature_mix)});
        for (int c : w.stages) widest = std::max(widest, static_cast<double>(c));
    }
    widest = std::max(widest, static_cast<double>(s.n_classes));
    const double res = *std::max_element(s.resolutions.begin(), s.resolutions.end());
    const double k = *std::max_element(s.ks_list.begin(), s.ks_list.end());
    const double e = *std::max_element(s.expand_list.begin(), s.expand_list.end());
    const double bound = (s.total_blocks_ + 3.0) * res * res * widest * widest * e * (2.0 + k * k);
    if (bound > kMaxMacs)
        root.fail("the largest subnet could reach " + formatFixed(bound, 0) + " MACs, beyond what 64-bit costs hold (" +
                  formatFixed(kMaxMacs, 0) + "); use smaller resolutions, widths, kernels or expand ratios");
    return s;
}

void DesignSpace::finalize(const std::string& source)
{
    total_blocks_ = 0;
    block_stage_.clear();
    for (std::size_t i = 0; i < stages.size(); ++i) {
        stages[i].first_block = total_blocks_;
        total_blocks_ += stages[i].max_blocks;
        for (int b = 0; b < stages[i].max_blocks; ++b) block_stage_.push_back(static_cast<int>(i));
    }
    if (total_blocks_ + 1 > kMaxBlocks)
        throw InputError(source + ": the space has " + std::to_string(total_blocks_) +
                         " blocks; at most " + std::to_string(kMaxBlocks - 1) + " are supported");
}

DesignSpace DesignSpace::loadFile(const std::string& path)
{
    return fromJson(readJsonFile(path), path);
}

int DesignSpace::maxDepth() const { return *std::max_element(depth_list.begin(), depth_list.end()); }
int DesignSpace::minDepth() const { return *std::min_element(depth_list.begin(), depth_list.end()); }

Json DesignSpace::toJson() const
{
    Json j;
    j["name"] = name;
    j["family"] = family;
    if (!description.empty()) j["description"] = description;
    j["n_classes"] = n_classes;
    if (!class_names.empty()) j["class_names"] = class_names;
    j["resolutions"] = resolutions;
    j["width_mult_list"] = width_mult_list;
    Json ws = Json::array();
    for (const WidthSet& w : widths)
        ws.push_back({{"first_conv", w.first_conv}, {"block0", w.block0}, {"stages", w.stages}, {"feature_mix", w.feature_mix}});
    j["widths"] = ws;
    j["ks_list"] = ks_list;
    j["expand_ratio_list"] = expand_list;
    j["depth_list"] = depth_list;
    std::vector<int> strides, base;
    std::vector<bool> elastic;
    Json se = Json::array();
    for (const StageSpec& st : stages) {
        strides.push_back(st.stride);
        base.push_back(st.base_depth);
        elastic.push_back(st.elastic_depth);
        bool all = std::all_of(st.se.begin(), st.se.end(), [&](bool b) { return b == st.se.front(); });
        if (all) se.push_back(static_cast<bool>(st.se.front()));
        else se.push_back(st.se);
    }
    j["stage_strides"] = strides;
    j["base_depth"] = base;
    j["elastic_depth"] = elastic;
    j["se_stages"] = se;
    j["sampler_width_indices"] = sampler_width_indices;
    j["bn_eps"] = bn_eps;
    return j;
}

}  // namespace tinyscope
