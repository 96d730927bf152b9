#pragma once
// A pan/zoom view of a Graphviz SVG: wheel zooms around the cursor, drag pans, double-click fits.
// Knows the graph's nodes (Graphviz writes <g id="nodeN" class="node"><title>NAME</title>), so a
// click reports the node name and search can select and centre a node by name.
#include <QGraphicsView>
#include <QHash>
#include <QRectF>
#include <QStringList>

class QGraphicsSvgItem;
class QGraphicsRectItem;
class QSvgRenderer;

namespace tinyscope::ui {

class SvgGraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit SvgGraphView(QWidget* parent = nullptr);

    void setSvg(const QByteArray& svg, bool keepView = false);
    const QByteArray& svg() const { return svg_; }
    QStringList nodeNames() const { return nodeOrder_; }
    // Selects the node (outline) and centres it; returns false if there is no such node.
    bool selectNode(const QString& name);
    QString selectedNode() const { return selected_; }
    void fitAll();
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
    QByteArray svg_;
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
