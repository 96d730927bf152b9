#include "graph/SchemeEdit.h"

#include "graph/PublishedSchemes.h"

#include "Error.h"
#include "zoo/Network.h"

namespace tinyscope {

namespace {

// n_bias_update counts the bias-updated backbone convs (equal to tiny-training's key when they
// form the tail); back-propagation stops at the first updated conv.
void refreshDerived(ResolvedScheme& s, int numBackbone)
{
    s.n_bias_update = 0;
    s.first_updated = numBackbone;
    for (int i = numBackbone - 1; i >= 0; --i) {
        const ConvUpdate& u = s.conv(i);
        if (u.bias) ++s.n_bias_update;
        if (u.bias || u.weight()) s.first_updated = i;
    }
}

std::string range(int a, int b) { return a == b ? std::to_string(a) : std::to_string(a) + ".." + std::to_string(b); }

}  // namespace

ResolvedScheme classifierOnlyScheme(const Network& net) { return SparseScheme::biasOnly(0).resolve(net); }

bool ratioSelectsChannels(const Layer& c, double ratio) { return ratio <= 0 || updatedChannels(c, ratio) > 0; }

void setConvUpdate(ResolvedScheme& s, const Network& net, int index, bool bias, double ratio)
{
    const int nb = net.numBackboneConvs();
    if (index < 0 || index >= nb)
        throw InputError("conv " + std::to_string(index) + " is not a backbone conv of " + net.name + " (0.." +
                         std::to_string(nb - 1) + "; the classifier is always updated)");
    const Layer& c = net.conv(index);
    if (!isAllowedRatio(ratio))
        throw InputError("conv " + std::to_string(index) + " (" + c.name + "): weight-update ratio " + formatRatio(ratio) +
                         " is not one of 0, 1/8, 1/4, 1/2, 1");
    if (!ratioSelectsChannels(c, ratio))
        throw InputError("conv " + std::to_string(index) + " (" + c.name + "): ratio " + formatRatio(ratio) +
                         " selects no input channel of its " + std::to_string(c.cin));
    ConvUpdate& u = s.convs[static_cast<std::size_t>(index)];
    u.bias = bias;
    u.ratio = ratio > 0 ? ratio : 0.0;
    u.k = ratio > 0 ? updatedChannels(c, ratio) : 0;
    u.k_compiler = ratio > 0 ? updatedChannels(c, ratio, true) : 0;
    refreshDerived(s, nb);
}

std::string schemeExpressibilityProblem(const ResolvedScheme& s, const Network& net)
{
    const int nb = net.numBackboneConvs();
    int tail = nb;   // first conv of the bias tail ending at the last backbone conv
    while (tail > 0 && s.conv(tail - 1).bias) --tail;
    for (int i = 0; i < tail; ++i) {
        if (s.conv(i).bias)
            return "the bias of conv " + std::to_string(i) + " is updated but not of conv " + std::to_string(tail - 1) +
                   ": tiny-training's n_bias_update names the last N backbone convs only (here convs " + range(tail, nb - 1) +
                   " form the tail)";
        if (s.conv(i).weight())
            return "the weight of conv " + std::to_string(i) + " is updated outside the bias-updated tail" +
                   (tail < nb ? " (convs " + range(tail, nb - 1) + ")" : std::string(" (no bias is updated)")) +
                   ": tiny-training requires manual_weight_idx inside it";
    }
    return {};
}

SparseScheme sparseSchemeOf(const ResolvedScheme& s, const Network& net)
{
    const std::string problem = schemeExpressibilityProblem(s, net);
    if (!problem.empty()) throw InputError(net.name + ": no tiny-training config for this scheme: " + problem);
    SparseScheme out;
    const int nb = net.numBackboneConvs();
    for (int i = 0; i < nb; ++i) {
        const ConvUpdate& u = s.conv(i);
        if (u.bias) ++out.n_bias_update;
        if (u.weight()) {
            out.manual_weight_idx.push_back(i);
            out.weight_update_ratio.push_back(u.ratio);
        }
    }
    return out;
}

bool sameUpdates(const ResolvedScheme& a, const ResolvedScheme& b)
{
    if (a.convs.size() != b.convs.size()) return false;
    for (std::size_t i = 0; i < a.convs.size(); ++i) {
        const ConvUpdate &x = a.convs[i], &y = b.convs[i];
        if (x.bias != y.bias || x.ratio != y.ratio || x.k != y.k || x.k_compiler != y.k_compiler) return false;
    }
    return true;
}

std::string describeScheme(const ResolvedScheme& scheme, const Network& net)
{
    for (const PublishedScheme& p : publishedSchemesFor(net.name))
        if (sameUpdates(p.scheme.resolve(net), scheme)) return p.id();
    if (!schemeExpressibilityProblem(scheme, net).empty()) return "custom (no tiny-training config)";
    const SparseScheme s = sparseSchemeOf(scheme, net);
    std::string w;
    for (std::size_t i = 0; i < s.manual_weight_idx.size(); ++i)
        w += (w.empty() ? "" : ", ") + std::to_string(s.manual_weight_idx[i]) + " @ " + formatRatio(s.weight_update_ratio[i]);
    return "n_bias_update " + std::to_string(s.n_bias_update) + "; weights " + (w.empty() ? std::string("none") : w);
}

}  // namespace tinyscope
