#include "SubnetDiagramView.h"

#include "DiagramExport.h"
#include "Palette.h"

#include <QLabel>

#include "viz/ArchDiagram.h"
#include "viz/GraphvizRenderer.h"

namespace tinyscope::ui {

SubnetDiagramView::SubnetDiagramView(std::function<QString()> stem, QWidget* parent) : SvgGraphView(parent)
{
    offerDiagramSave(this, [this] { return dot_; }, std::move(stem));
    // The kernel colours, always in view (the diagram itself pans and zooms under it).
    legend_ = new QLabel(this);
    QString html = QStringLiteral("<span style='color:%1'>kernel:</span>").arg(paletteName("text.dim"));
    for (int k : {3, 5, 7})
        html += QStringLiteral(" <span style='background:%1'>&nbsp;&nbsp;&nbsp;</span> %2×%2").arg(paletteName("arch.kernel" + std::to_string(k))).arg(k);
    legend_->setText(html);
    legend_->setTextFormat(Qt::RichText);
    legend_->setAutoFillBackground(true);
    legend_->setContentsMargins(4, 2, 4, 2);
    legend_->setToolTip(QStringLiteral("Block colour = depthwise kernel size; the outlined block sets the peak SRAM"));
    legend_->adjustSize();
    legend_->move(6, 6);
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
