#include "SvgGraphView.h"

#include "Palette.h"

#include <QGraphicsRectItem>
#include <algorithm>
#include <cmath>
#include <vector>
#include <QGraphicsScene>
#include <QGraphicsSvgItem>
#include <QLabel>
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

void SvgGraphView::resetScene()
{
    scene()->clear();
    marker_ = nullptr;
    item_ = nullptr;
    items_ = GvItems();
    nodeRects_.clear();
    nodeOrder_.clear();
    selected_.clear();
}

void SvgGraphView::clear()
{
    svg_.clear();
    resetScene();
    scene()->setSceneRect(QRectF());
}

void SvgGraphView::finishLoad(const QTransform& keep, const QPointF& centre, bool keepView)
{
    if (keepView && userZoomed_) {
        setTransform(keep);
        centerOn(centre);
    } else {
        fitAll();
    }
}

void SvgGraphView::setLayout(const GvLayout& layout, const QByteArray& svg, bool keepView)
{
    svg_ = svg;
    const QTransform keep = transform();
    const QPointF centre = mapToScene(viewport()->rect().center());
    resetScene();
    items_ = addGraphvizItems(scene(), layout);
    scene()->setSceneRect(layout.bounds.adjusted(-20, -20, 20, 20));
    for (const GvNode& n : layout.nodes) {
        nodeRects_.insert(n.name, n.bounds);
        nodeOrder_.append(n.name);
    }
    finishLoad(keep, centre, keepView);
}

void SvgGraphView::setNodeStyle(const QString& node, const GvStyle& style)
{
    if (QGraphicsItem* item = items_.nodes.value(node)) restyleItem(item, style);
}

void SvgGraphView::setEdgeStyle(const QString& from, const QString& to, const GvStyle& style)
{
    const QString key = from + QStringLiteral("->") + to;
    for (auto it = items_.edges.constFind(key); it != items_.edges.constEnd() && it.key() == key; ++it)
        restyleItem(it.value(), style);
}

void SvgGraphView::setOverlayText(const QString& text)
{
    if (!overlay_) {
        overlay_ = new QLabel(viewport());
        const QColor bg = paletteColor("overlay.background");
        overlay_->setStyleSheet(QStringLiteral("QLabel { background: rgba(%1, %2, %3, 235); border: 1px solid %4; "
                                               "border-radius: 4px; padding: 4px 10px; color: %5; }")
                                    .arg(QString::number(bg.red()), QString::number(bg.green()), QString::number(bg.blue()),
                                         paletteName("overlay.border"), paletteName("overlay.text")));
    }
    overlay_->setText(text);
    overlay_->setWordWrap(true);
    overlay_->setMaximumWidth(std::max(200, viewport()->width() - 40));
    overlay_->adjustSize();
    overlay_->move((viewport()->width() - overlay_->width()) / 2, 8);
    overlay_->setVisible(!text.isEmpty());
}

QString SvgGraphView::overlayText() const { return overlay_ && !overlay_->isHidden() ? overlay_->text() : QString(); }

void SvgGraphView::setSvg(const QByteArray& svg, bool keepView)
{
    svg_ = svg;
    const QTransform keep = transform();
    const QPointF centre = mapToScene(viewport()->rect().center());
    resetScene();
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
    finishLoad(keep, centre, keepView);
}

void SvgGraphView::fitAll()
{
    if (!item_ && items_.nodes.isEmpty()) return;
    setUserZoomed(false);
    resetTransform();
    QRectF r = item_ ? item_->boundingRect() : scene()->sceneRect().adjusted(20, 20, -20, -20);
    fitInView(r, Qt::KeepAspectRatio);
    // Never blow small diagrams up beyond 1.5×; long ones stay readable and scroll instead.
    double s = transform().m11();
    if (s > 1.5) {
        resetTransform();
        scale(1.5, 1.5);
    }
    centerOn(r.center());
}

bool SvgGraphView::frameNodes(const QStringList& anchors, const QStringList& nearby, double minScale)
{
    QRectF r;
    for (const QString& n : anchors) {
        auto it = nodeRects_.constFind(n);
        if (it != nodeRects_.constEnd()) r = r.isNull() ? it.value() : r.united(it.value());
    }
    if (r.isNull()) return false;
    const QSizeF port = viewport()->size();
    auto scaleFor = [&](const QRectF& x) {
        const QRectF m = x.adjusted(-30, -30, 30, 30);
        return std::min(port.width() / m.width(), port.height() / m.height());
    };
    std::vector<std::pair<double, QRectF>> more;
    for (const QString& n : nearby) {
        auto it = nodeRects_.constFind(n);
        if (it == nodeRects_.constEnd()) continue;
        const QPointF d = it.value().center() - r.center();
        more.push_back({d.x() * d.x() + d.y() * d.y(), it.value()});
    }
    std::sort(more.begin(), more.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [dist, rect] : more) {
        const QRectF u = r.united(rect);
        if (scaleFor(u) < minScale) break;
        r = u;
    }
    const double s = std::clamp(scaleFor(r), minScale, 1.5);
    setUserZoomed(true);   // a relayout of the same model keeps this view
    resetTransform();
    scale(s, s);
    centerOn(r.center());
    return true;
}

void SvgGraphView::setUserZoomed(bool zoomed)
{
    userZoomed_ = zoomed;
    // A fitted view shows everything, so it has no scroll bars. With them "as needed" the fit
    // itself can flip them: a bar appears, the viewport shrinks, the refit needs no bar, it goes,
    // the viewport grows, ... (the event loop never idles: seen at 1280×720 with the tour dock).
    const Qt::ScrollBarPolicy policy = zoomed ? Qt::ScrollBarAsNeeded : Qt::ScrollBarAlwaysOff;
    setHorizontalScrollBarPolicy(policy);
    setVerticalScrollBarPolicy(policy);
}

void SvgGraphView::zoomBy(double factor)
{
    setUserZoomed(true);
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
    if (overlay_) overlay_->move((viewport()->width() - overlay_->width()) / 2, 8);
    if (!userZoomed_) fitAll();
}

QString SvgGraphView::nodeAt(const QPointF& p) const
{
    for (auto it = nodeRects_.constBegin(); it != nodeRects_.constEnd(); ++it)
        if (it.value().contains(p)) return it.key();
    return {};
}

bool SvgGraphView::focusNode(const QString& name, double minScale)
{
    if (!nodeRects_.contains(name)) return false;
    const double s = transform().m11();
    if (s < minScale) zoomBy(minScale / s);
    return selectNode(name);
}

bool SvgGraphView::selectNode(const QString& name)
{
    auto it = nodeRects_.constFind(name);
    if (it == nodeRects_.constEnd()) return false;
    selected_ = name;
    if (!marker_) {
        marker_ = scene()->addRect(QRectF(), QPen(paletteColor("highlight"), 3), Qt::NoBrush);
        marker_->setZValue(10);
    }
    marker_->setRect(it.value().adjusted(-4, -4, 4, 4));
    centerOn(it.value().center());
    return true;
}

}  // namespace tinyscope::ui
