#pragma once
// A subnet's block diagram as the lab draws it (viz/ArchDiagram: its title with the costs, the
// peak-SRAM block outlined) in a pan/zoom view; right-click saves it as SVG / PNG / DOT under
// a default name the owner gives. The Design-space panel's diagram and the Search winner's.
#include "SvgGraphView.h"

#include <QString>

class QLabel;

#include <functional>
#include <string>

namespace tinyscope {
struct CostReport;
class DesignSpace;
struct SubnetConfig;
}  // namespace tinyscope

namespace tinyscope::ui {

class SubnetDiagramView : public SvgGraphView {
    Q_OBJECT
public:
    // `stem`: the file name a save offers, without suffix.
    explicit SubnetDiagramView(std::function<QString()> stem, QWidget* parent = nullptr);

    // Draws `config` costed by `report` (`predictedTop1Percent` < 0: no accuracy in the title).
    // Returns "" when drawn, else the message why not (the DOT is then empty and the view keeps
    // what it showed).
    QString showSubnet(const DesignSpace& space, const SubnetConfig& config, const CostReport& report,
                       double predictedTop1Percent = -1);
    void clearDiagram();   // nothing shown, nothing to save
    // The DOT text of the diagram shown (what a save writes); empty when there is none.
    const std::string& dot() const { return dot_; }

    QLabel* kernelLegend() const { return legend_; }

protected:
    void resizeEvent(QResizeEvent* e) override;
    void changeEvent(QEvent* e) override;

private:
    // The kernel legend at its text's size, wrapped to the view's width when narrower (issue 47:
    // presentation mode's larger font cut off "7×7").
    void placeLegend();
    // A fitted diagram grows with presentation mode (×Presentation::scale(), its top in view; drag
    // pans to the rest); a zoomed one is left as the user zoomed it.
    void applyPresentationZoom();

    std::string dot_;
    QLabel* legend_;
};

}  // namespace tinyscope::ui
