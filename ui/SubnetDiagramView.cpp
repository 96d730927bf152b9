#include "SubnetDiagramView.h"

#include "DiagramExport.h"

#include "viz/ArchDiagram.h"
#include "viz/GraphvizRenderer.h"

namespace tinyscope::ui {

SubnetDiagramView::SubnetDiagramView(std::function<QString()> stem, QWidget* parent) : SvgGraphView(parent)
{
    offerDiagramSave(this, [this] { return dot_; }, std::move(stem));
}

QString SubnetDiagramView::showSubnet(const DesignSpace& space, const SubnetConfig& config, const CostReport& report,
                                      double predictedTop1Percent)
{
    try {
        dot_ = archDiagramDot(space, config, costedDiagramOptions(report, predictedTop1Percent));
        setSvg(QByteArray::fromStdString(renderDotToSvg(dot_)));
        return QString();
    } catch (const std::exception& e) {
        dot_.clear();
        return QString::fromUtf8(e.what());
    }
}

void SubnetDiagramView::clearDiagram()
{
    dot_.clear();
    setSvg(QByteArray());
}

}  // namespace tinyscope::ui
