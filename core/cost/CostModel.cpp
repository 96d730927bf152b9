#include "cost/CostModel.h"

#include "cost/ModuleWalk.h"

namespace tinyscope {

namespace {

struct ModuleCost {
    std::int64_t macs = 0, params = 0, weights = 0, biases = 0;
    bool isBn = false;
};

// Cost of one module, the single place where the counting rules live.
inline ModuleCost costOf(const ModuleEvent& m)
{
    ModuleCost c;
    switch (m.type) {
    case ModuleType::Conv2d: {
        const std::int64_t w = static_cast<std::int64_t>(m.cout) * (m.cin / m.groups) * m.kernel * m.kernel;
        c.macs = static_cast<std::int64_t>(m.hout) * m.hout * w;
        c.weights = w;
        c.params = w + (m.bias ? m.cout : 0);
        // BN that follows a conv folds into an int32 bias; SE convs carry their own bias.
        c.biases = m.cout;
        break;
    }
    case ModuleType::BatchNorm2d:
        c.macs = 4LL * m.cout * m.hout * m.hout;
        c.params = 2LL * m.cout;
        c.isBn = true;
        break;
    case ModuleType::Linear:
        c.macs = static_cast<std::int64_t>(m.cin) * m.cout;
        c.weights = c.macs;
        c.params = c.macs + (m.bias ? m.cout : 0);
        c.biases = m.bias ? m.cout : 0;
        break;
    default:
        break;
    }
    return c;
}

struct SummaryVisitor {
    CostSummary s;
    std::int64_t bn_macs = 0;
    std::int64_t best = -1;
    int term = 0;
    void module(const ModuleEvent& m)
    {
        ModuleCost c = costOf(m);
        s.macs += c.macs;
        if (c.isBn) bn_macs += c.macs;
        s.params += c.params;
        s.flash_bytes += c.weights + 4 * c.biases;
    }
    void peak(const PeakEvent& p)
    {
        if (p.elements > best) {
            best = p.elements;
            s.peak_term = term;
        }
        ++term;
    }
};

struct ReportVisitor {
    CostReport* r;
    SummaryVisitor sum;
    void module(const ModuleEvent& m)
    {
        sum.module(m);
        ModuleCost c = costOf(m);
        LayerCost row;
        row.name = moduleName(m);
        row.type = moduleTypeName(m.type);
        if (m.type == ModuleType::Linear) {
            row.input_shape = {1, m.cin};
            row.output_shape = {1, m.cout};
        } else {
            row.input_shape = {1, m.cin, m.hin, m.hin};
            row.output_shape = {1, m.cout, m.hout, m.hout};
        }
        row.macs = c.macs;
        row.params = c.params;
        if (m.type == ModuleType::Conv2d) {
            row.kernel = m.kernel;
            row.stride = m.stride;
            row.groups = m.groups;
            r->conv_macs += c.macs;
        }
        if (m.type == ModuleType::Linear) r->linear_macs += c.macs;
        if (c.isBn) r->bn_elements += c.macs / 4;
        row.bias = m.bias;
        row.block = m.block;
        r->layers.push_back(std::move(row));
    }
    void peak(const PeakEvent& p)
    {
        sum.peak(p);
        r->peak_terms.push_back(PeakTerm{peakTermName(p), p.block, p.elements, p.ib, p.dw, p.pl, p.residual});
    }
};

}  // namespace

const char* moduleTypeName(ModuleType t)
{
    switch (t) {
    case ModuleType::Conv2d: return "Conv2d";
    case ModuleType::BatchNorm2d: return "BatchNorm2d";
    case ModuleType::ReLU6: return "ReLU6";
    case ModuleType::Hsigmoid: return "Hsigmoid";
    case ModuleType::Identity: return "IdentityLayer";
    case ModuleType::Linear: return "Linear";
    }
    return "?";
}

std::string moduleName(const ModuleEvent& m)
{
    auto part = [&]() -> const char* {
        switch (m.type) {
        case ModuleType::Conv2d: return "conv";
        case ModuleType::BatchNorm2d: return "bn";
        default: return "act";
        }
    };
    const std::string blk = "blocks." + std::to_string(m.block) + ".";
    const std::string mic = blk + "mobile_inverted_conv.";
    switch (m.site) {
    case ModuleSite::FirstConv: return std::string("first_conv.") + part();
    case ModuleSite::InvertedBottleneck: return mic + "inverted_bottleneck." + part();
    case ModuleSite::DepthConv: return mic + "depth_conv." + part();
    case ModuleSite::SeReduce: return mic + "depth_conv.se.fc.reduce";
    case ModuleSite::SeRelu: return mic + "depth_conv.se.fc.relu";
    case ModuleSite::SeExpand: return mic + "depth_conv.se.fc.expand";
    case ModuleSite::SeHsigmoid: return mic + "depth_conv.se.fc.h_sigmoid";
    case ModuleSite::PointLinear: return mic + "point_linear." + part();
    case ModuleSite::Shortcut: return blk + "shortcut";
    case ModuleSite::FeatureMix: return std::string("feature_mix_layer.") + part();
    case ModuleSite::Classifier: return "classifier.linear";
    }
    return "?";
}

std::string peakTermName(const PeakEvent& p)
{
    switch (p.site) {
    case ModuleSite::FirstConv: return "first_conv";
    case ModuleSite::FeatureMix: return "feature_mix_layer";
    case ModuleSite::Classifier: return "classifier";
    default: return "blocks." + std::to_string(p.block);
    }
}

CostSummary CostModel::summary(const SubnetConfig& config) const
{
    SubnetLayout layout;
    layoutSubnet(*space_, config, layout);
    return summary(layout);
}

CostSummary CostModel::summary(const SubnetLayout& layout)
{
    SummaryVisitor v;
    walkModules(layout, v);
    walkPeakTerms(layout, v);
    v.s.macs_without_bn = v.s.macs - v.bn_macs;
    v.s.peak_activation_bytes = v.best;
    return v.s;
}

CostReport CostModel::report(const SubnetConfig& config) const
{
    SubnetLayout layout;
    layoutSubnet(*space_, config, layout);
    CostReport r;
    ReportVisitor v{&r, {}};
    walkModules(layout, v);
    walkPeakTerms(layout, v);
    v.sum.s.macs_without_bn = v.sum.s.macs - v.sum.bn_macs;
    v.sum.s.peak_activation_bytes = v.sum.best;
    r.summary = v.sum.s;
    r.peak_layer = r.peak_terms[static_cast<std::size_t>(r.summary.peak_term)].name;
    return r;
}

Json toJson(const CostSummary& s)
{
    Json j;
    j["macs"] = s.macs;
    j["million_macs"] = s.millionMacs();
    j["macs_without_bn"] = s.macs_without_bn;
    j["params"] = s.params;
    j["peak_activation_bytes"] = s.peak_activation_bytes;
    j["peak_activation_kb"] = s.peakKB();
    j["flash_bytes"] = s.flash_bytes;
    j["flash_kb"] = s.flashKB();
    return j;
}

Json toJson(const CostReport& r)
{
    Json j = toJson(r.summary);
    j["peak_layer"] = r.peak_layer;
    j["macs_breakdown"] = {{"conv_macs", r.conv_macs}, {"linear_macs", r.linear_macs}, {"bn_elements", r.bn_elements}};
    Json layers = Json::array();
    for (const LayerCost& l : r.layers) {
        Json row{{"name", l.name}, {"type", l.type}, {"input_shape", l.input_shape}, {"output_shape", l.output_shape},
                 {"macs", l.macs}, {"params", l.params}};
        if (l.type == "Conv2d") {
            row["kernel"] = l.kernel;
            row["stride"] = l.stride;
            row["groups"] = l.groups;
            row["bias"] = l.bias;
        }
        layers.push_back(std::move(row));
    }
    j["layers"] = std::move(layers);
    Json terms = Json::array();
    for (const PeakTerm& t : r.peak_terms) {
        Json row{{"name", t.name}, {"elements", t.elements}};
        if (t.block >= 0) {
            row["ib"] = t.ib;
            row["dw"] = t.dw;
            row["pl"] = t.pl;
            row["residual"] = t.residual;
        }
        terms.push_back(std::move(row));
    }
    j["peak_terms"] = std::move(terms);
    return j;
}

}  // namespace tinyscope
