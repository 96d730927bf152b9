#include "SvgGraphView.h"

#include <QGraphicsRectItem>
#include <cmath>
#include <QGraphicsScene>
#include <QGraphicsSvgItem>
#include <QMouseEvent>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSvgRenderer>
#include <QWheelEvent>

namespace tinyscope::ui {

SvgGraphView::SvgGraphView(QWidget* parent) : QGraphicsView(parent)
{
    setScene(new QGraphicsScene(this));
    setDragMode(QGraphicsView::ScrollHandDrag);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setBackgroundBrush(Qt::white);
    renderer_ = new QSvgRenderer(this);
}

void SvgGraphView::setSvg(const QByteArray& svg, bool keepView)
{
    svg_ = svg;
    const QTransform keep = transform();
    const QPointF centre = mapToScene(viewport()->rect().center());
    scene()->clear();
    marker_ = nullptr;
    item_ = nullptr;
    nodeRects_.clear();
    nodeOrder_.clear();
    selected_.clear();
    if (!renderer_->load(svg)) return;
    renderer_->setAspectRatioMode(Qt::KeepAspectRatio);
    item_ = new QGraphicsSvgItem();
    item_->setSharedRenderer(renderer_);
    scene()->addItem(item_);
    scene()->setSceneRect(item_->boundingRect().adjusted(-20, -20, 20, 20));

    // Node ids and titles as Graphviz writes them.
    static const QRegularExpression re(
        QStringLiteral("<g id=\"(node\\d+)\" class=\"node\">\\s*<title>([^<]*)</title>"));
    auto it = re.globalMatch(QString::fromUtf8(svg));
    while (it.hasNext()) {
        auto m = it.next();
        const QString id = m.captured(1);
        QString title = m.captured(2);
        title.replace(QStringLiteral("&lt;"), QStringLiteral("<"))
            .replace(QStringLiteral("&gt;"), QStringLiteral(">"))
            .replace(QStringLiteral("&quot;"), QStringLiteral("\""))
            .replace(QStringLiteral("&amp;"), QStringLiteral("&"));
        if (!renderer_->elementExists(id)) continue;
        QRectF r = renderer_->transformForElement(id).mapRect(renderer_->boundsOnElement(id));
        nodeRects_.insert(title, r);
        nodeOrder_.append(title);
    }
    if (keepView && userZoomed_) {
        setTransform(keep);
        centerOn(centre);
    } else {
        fitAll();
    }
}

void SvgGraphView::fitAll()
{
    if (!item_) return;
    userZoomed_ = false;
    resetTransform();
    QRectF r = item_->boundingRect();
    fitInView(r, Qt::KeepAspectRatio);
    // Never blow small diagrams up beyond 1.5×; long ones stay readable and scroll instead.
    double s = transform().m11();
    if (s > 1.5) {
        resetTransform();
        scale(1.5, 1.5);
    }
    centerOn(r.center());
}

void SvgGraphView::zoomBy(double factor)
{
    userZoomed_ = true;
    scale(factor, factor);
}

void SvgGraphView::wheelEvent(QWheelEvent* e)
{
    const double steps = e->angleDelta().y() / 120.0;
    if (steps == 0) return;
    zoomBy(std::pow(1.2, steps));
    e->accept();
}

void SvgGraphView::mousePressEvent(QMouseEvent* e)
{
    pressPos_ = e->pos();
    QGraphicsView::mousePressEvent(e);
}

void SvgGraphView::mouseReleaseEvent(QMouseEvent* e)
{
    QGraphicsView::mouseReleaseEvent(e);
    if ((e->pos() - pressPos_).manhattanLength() < 4 && e->button() == Qt::LeftButton) {
        const QString name = nodeAt(mapToScene(e->pos()));
        if (!name.isEmpty()) {
            selectNode(name);
            Q_EMIT nodeClicked(name);
        }
    }
}

void SvgGraphView::mouseDoubleClickEvent(QMouseEvent* e)
{
    if (nodeAt(mapToScene(e->pos())).isEmpty()) fitAll();
    QGraphicsView::mouseDoubleClickEvent(e);
}

void SvgGraphView::resizeEvent(QResizeEvent* e)
{
    QGraphicsView::resizeEvent(e);
    if (!userZoomed_) fitAll();
}

QString SvgGraphView::nodeAt(const QPointF& p) const
{
    for (auto it = nodeRects_.constBegin(); it != nodeRects_.constEnd(); ++it)
        if (it.value().contains(p)) return it.key();
    return {};
}

bool SvgGraphView::selectNode(const QString& name)
{
    auto it = nodeRects_.constFind(name);
    if (it == nodeRects_.constEnd()) return false;
    selected_ = name;
    if (!marker_) {
        marker_ = scene()->addRect(QRectF(), QPen(QColor(0xd6, 0x27, 0x28), 3), Qt::NoBrush);
        marker_->setZValue(10);
    }
    marker_->setRect(it.value().adjusted(-4, -4, 4, 4));
    centerOn(it.value().center());
    return true;
}

}  // namespace tinyscope::ui
