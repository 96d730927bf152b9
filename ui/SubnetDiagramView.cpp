#include "SubnetDiagramView.h"

#include "DiagramExport.h"
#include "Palette.h"
#include "Presentation.h"

#include <QEvent>
#include <QLabel>

#include <algorithm>

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
    placeLegend();
}

void SubnetDiagramView::placeLegend()
{
    const int room = std::max(60, width() - 12);
    legend_->setWordWrap(false);
    QSize size = legend_->sizeHint();
    if (size.width() > room) {
        legend_->setWordWrap(true);
        size = QSize(room, legend_->heightForWidth(room));
    }
    legend_->resize(size);
    legend_->move(6, 6);
}

void SubnetDiagramView::applyPresentationZoom()
{
    // fitAll leaves the scroll bars off; a user's zoom turns them on (SvgGraphView::setUserZoomed).
    if (horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff || dot_.empty()) return;
    const double k = Presentation::scale();
    if (k == 1.0) return;
    scale(k, k);
    const QRectF r = scene()->itemsBoundingRect();
    const double m = transform().m11();   // the top left in view: the input, stage 1 and the title
    centerOn(QPointF(std::min(r.center().x(), r.left() + viewport()->width() / (2.0 * m)), r.top() + viewport()->height() / (2.0 * m)));
}

void SubnetDiagramView::resizeEvent(QResizeEvent* e)
{
    SvgGraphView::resizeEvent(e);   // refits a fitted diagram
    placeLegend();
    applyPresentationZoom();
}

void SubnetDiagramView::changeEvent(QEvent* e)
{
    SvgGraphView::changeEvent(e);
    if (e->type() != QEvent::FontChange) return;
    placeLegend();
    if (horizontalScrollBarPolicy() == Qt::ScrollBarAlwaysOff) {
        fitAll();
        applyPresentationZoom();
    }
}

QString SubnetDiagramView::showSubnet(const DesignSpace& space, const SubnetConfig& config, const CostReport& report,
                                      double predictedTop1Percent)
{
    try {
        dot_ = archDiagramDot(space, config, costedDiagramOptions(report, predictedTop1Percent));
        setSvg(QByteArray::fromStdString(renderDotToSvg(dot_)));
        applyPresentationZoom();
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
