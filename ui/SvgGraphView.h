#pragma once
// A pan/zoom view of a Graphviz SVG: wheel zooms around the cursor, drag pans, double-click fits.
// Knows the graph's nodes (Graphviz writes <g id="nodeN" class="node"><title>NAME</title>), so a
// click reports the node name and search can select and centre a node by name.
// Small diagrams render the SVG as one item (setSvg); large graphs come as parsed geometry
// (setLayout, GraphvizScene.h): one item per node and edge, recolourable without a re-parse.
#include "GraphvizScene.h"

#include <QGraphicsView>
#include <QHash>
#include <QRectF>
#include <QStringList>

class QGraphicsSvgItem;
class QGraphicsRectItem;
class QLabel;
class QSvgRenderer;

namespace tinyscope::ui {

class SvgGraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit SvgGraphView(QWidget* parent = nullptr);

    void setSvg(const QByteArray& svg, bool keepView = false);
    const QByteArray& svg() const { return svg_; }
    // Item mode: `svg` is kept for export only (may be empty).
    void setLayout(const GvLayout& layout, const QByteArray& svg = {}, bool keepView = false);
    void setNodeStyle(const QString& node, const GvStyle& style);
    void setEdgeStyle(const QString& from, const QString& to, const GvStyle& style);
    // A note over the top of the view ("laying out…"); empty hides it.
    void setOverlayText(const QString& text);
    QString overlayText() const;
    void clear();
    QStringList nodeNames() const { return nodeOrder_; }
    // Selects the node (outline) and centres it; returns false if there is no such node.
    bool selectNode(const QString& name);
    // selectNode, zoomed in to at least `minScale` (1 = Graphviz points at screen pixels).
    bool focusNode(const QString& name, double minScale);
    QString selectedNode() const { return selected_; }
    void fitAll();
    // A default zoom on what matters: the `anchors` and as many of the `nearby` nodes (nearest to
    // the anchors first) as fit at `minScale` or more, at most 1.5×; false when no anchor is laid out.
    bool frameNodes(const QStringList& anchors, const QStringList& nearby, double minScale);
    void zoomBy(double factor);

Q_SIGNALS:
    void nodeClicked(const QString& name);

protected:
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

private:
    QString nodeAt(const QPointF& scenePos) const;
    void resetScene();
    void finishLoad(const QTransform& keep, const QPointF& centre, bool keepView);
    void setUserZoomed(bool zoomed);   // also the scroll-bar policy: none while fitted
    QByteArray svg_;
    GvItems items_;
    QLabel* overlay_ = nullptr;
    QSvgRenderer* renderer_ = nullptr;
    QGraphicsSvgItem* item_ = nullptr;
    QGraphicsRectItem* marker_ = nullptr;
    QHash<QString, QRectF> nodeRects_;   // node title -> bounds in scene coordinates
    QStringList nodeOrder_;
    QString selected_;
    QPoint pressPos_;
    bool userZoomed_ = false;
};

}  // namespace tinyscope::ui
