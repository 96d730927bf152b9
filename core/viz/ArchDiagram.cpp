#include "viz/ArchDiagram.h"

#include "io/Text.h"
#include "space/SubnetLayout.h"
#include "viz/GraphvizRenderer.h"
#include "viz/Palette.h"

#include <sstream>

namespace tinyscope {

const char* kernelColour(int kernel)
{
    switch (kernel) {
    case 3: return paletteColour("arch.kernel3").c_str();
    case 5: return paletteColour("arch.kernel5").c_str();
    case 7: return paletteColour("arch.kernel7").c_str();
    default: return paletteColour("arch.kernel-other").c_str();
    }
}

namespace {
std::string hw(int h) { return std::to_string(h) + "x" + std::to_string(h); }
std::string fmtWidth(double w)
{
    std::ostringstream s;
    s << w;
    return s.str();
}
}  // namespace

std::string archDiagramDot(const DesignSpace& space, const SubnetConfig& config, const ArchDiagramOptions& options)
{
    SubnetLayout L;
    layoutSubnet(space, config, L);
    std::ostringstream o;
    o << "digraph subnet {\n"
      << "  graph [rankdir=TB nodesep=0.25 ranksep=0.45 fontname=\"DejaVu Sans\" fontsize=16 labelloc=t";
    if (!options.title.empty()) o << " label=" << dotQuote(options.title);
    o << "]\n"
      << "  node [fontname=\"DejaVu Sans\" fontsize=14 shape=box style=\"rounded,filled\" height=0.5 penwidth=0]\n"
      << "  edge [fontname=\"DejaVu Sans\" fontsize=12 arrowsize=0.6 color=\"" << paletteColour("arch.edge") << "\"]\n";

    auto node = [&](const std::string& id, const std::string& label, const std::string& fill, const std::string& font,
                    double width, const std::string& tooltip, bool highlight = false) {
        o << "  " << id << " [label=" << dotQuote(label) << " fillcolor=" << dotQuote(fill) << " fontcolor=" << font
          << " width=" << fmtWidth(width) << " tooltip=" << dotQuote(tooltip);
        if (highlight) o << " penwidth=4 color=\"" << paletteColour("highlight") << "\"";
        o << "]\n";
    };
    // `wrap`: an edge that leaves a stage row for the next one; it must not pull the rows
    // sideways (invisible divider-to-divider edges hold the rows' left edges in one column).
    auto edge = [&](const std::string& a, const std::string& b, int h, int c, bool wrap = false) {
        o << "  " << a << " -> " << b << " [label=" << dotQuote(" " + hw(h)) << " tooltip="
          << dotQuote(hw(h) + ", " + std::to_string(c) + " channels");
        if (wrap) o << " constraint=false";
        o << "]\n";
    };

    node("input", "input " + std::to_string(3) + "×" + hw(L.resolution), paletteColour("arch.input"), "black", 1.8,
         "image " + std::to_string(L.resolution) + "×" + std::to_string(L.resolution) + ", 3 channels");
    o << "  input [style=\"rounded\" penwidth=1]\n";
    node("stem", "Conv3x3 s2 → " + std::to_string(L.first_conv), paletteColour("arch.layer"), "white", 1.8,
         "first conv: 3→" + std::to_string(L.first_conv) + ", 3×3 stride 2, BN, ReLU6");
    edge("input", "stem", L.resolution, 3);
    const BlockShape& b0 = L.block(0);
    node("b0", "MBConv1 (1x1) → " + std::to_string(b0.cout), paletteColour("arch.block0"), "white", 1.8,
         "block 0 (fused): 1×1 conv " + std::to_string(b0.cin) + "→" + std::to_string(b0.cout) + ", BN, no activation",
         options.highlightBlock == 0);
    edge("stem", "b0", L.h1, L.first_conv);

    std::string prev = "b0";
    std::string prevDivider = "b0";
    int prevH = L.h1, prevC = b0.cout;
    int stage = -1;
    std::string rowNodes;
    auto closeRow = [&]() {
        if (options.rowPerStage && !rowNodes.empty()) o << "  { rank=same;" << rowNodes << " }\n";
        rowNodes.clear();
    };
    for (int i = 1; i < L.n_blocks; ++i) {
        const BlockShape& b = L.block(i);
        if (b.stage != stage) {
            closeRow();
            stage = b.stage;
            std::string sid = "s" + std::to_string(stage);
            const bool wrap = options.rowPerStage && prev != "b0";
            if (options.rowPerStage) o << "  " << prevDivider << " -> " << sid << " [style=invis weight=100]\n";
            prevDivider = sid;
            node(sid, "stage " + std::to_string(stage + 1), paletteColour("arch.stage"), "black", 1.1,
                 "stage " + std::to_string(stage + 1) + ": " + std::to_string(config.activeDepth(space, stage)) +
                     " blocks, " + std::to_string(b.cout) + " channels, first stride " + std::to_string(b.stride));
            edge(prev, sid, prevH, prevC, wrap);
            prev = sid;
            rowNodes += " " + sid;
        }
        std::string id = "b" + std::to_string(b.index);
        std::string label = "MBConv" + std::to_string(b.expand) + "-" + std::to_string(b.kernel) + "x" +
                            std::to_string(b.kernel);
        std::ostringstream tip;
        tip << "block " << b.index << " (supernet block " << b.supernet_block << "): " << b.cin << "→" << b.mid << "→" << b.cout << ", dw " << b.kernel << "×"
            << b.kernel << " stride " << b.stride << ", " << hw(b.hin) << "→" << hw(b.hout);
        if (b.se_mid) tip << ", SE " << b.se_mid;
        if (b.residual) tip << ", residual";
        node(id, label, kernelColour(b.kernel), "white", 0.75 + 0.25 * b.expand, tip.str(), options.highlightBlock == b.index);
        edge(prev, id, b.hin, b.cin);
        prev = id;
        prevH = b.hout;
        prevC = b.cout;
        rowNodes += " " + id;
    }
    closeRow();
    node("mix", "Conv1x1 → " + std::to_string(L.feature_mix), paletteColour("arch.layer"), "white", 1.8,
         "feature mix: 1×1 conv " + std::to_string(L.last_channels) + "→" + std::to_string(L.feature_mix) +
             ", BN, ReLU6");
    if (options.rowPerStage) o << "  " << prevDivider << " -> mix [style=invis weight=100]\n";
    edge(prev, "mix", L.hf, L.last_channels, options.rowPerStage);
    node("head", "AvgPool + FC → " + std::to_string(L.n_classes), paletteColour("arch.layer"), "white", 1.8,
         "global average pool, linear " + std::to_string(L.feature_mix) + "→" + std::to_string(L.n_classes));
    edge("mix", "head", L.hf, L.feature_mix);
    o << "}\n";
    return o.str();
}

ArchDiagramOptions costedDiagramOptions(const CostReport& report, double predictedTop1Percent)
{
    ArchDiagramOptions o;
    if (predictedTop1Percent >= 0) o.title = "predicted top-1 " + formatFixed(predictedTop1Percent, 2) + " %   ";
    o.title += "MACs(M): " + formatFixed(report.summary.millionMacs(), 2) +
               "  PeakMem(KB): " + formatFixed(report.summary.peakKB(), 2);
    for (const PeakTerm& t : report.peak_terms)
        if (t.name == report.peak_layer) o.highlightBlock = t.block;
    return o;
}

}  // namespace tinyscope
