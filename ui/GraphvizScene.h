#pragma once
// Graphviz's SVG output as plain geometry, and scene items drawn from it. QSvgRenderer repaints
// a whole 1,000-node training graph on every pan (~0.6 s measured); scene items are culled by
// the scene's index, skip text too small to read, and can be recoloured one by one, so a view
// of a large graph stays interactive and a restyle costs microseconds instead of a re-parse.
#include <QColor>
#include <QHash>
#include <QList>
#include <QPainterPath>
#include <QRectF>
#include <QString>

class QGraphicsItem;
class QGraphicsScene;

namespace tinyscope::ui {

struct GvText {
    QPointF pos;                 // baseline anchor point
    QString text;
    double size = 10;            // font size in scene units (Graphviz points)
    QString family;
    QColor colour = Qt::black;
    int anchor = 0;              // -1 start, 0 middle, 1 end
};

struct GvShape {
    QPainterPath path;
    QColor fill;                 // invalid: not filled
    QColor stroke;               // invalid: not stroked
    double width = 1;
    bool dashed = false;
};

struct GvNode {
    QString name;                // the DOT node name (SVG <title>)
    QList<GvShape> shapes;       // the first one is the node's outline
    QList<GvText> texts;
    QRectF bounds;
};

struct GvEdge {
    QString from, to;            // parsed from the title "from->to"
    QList<GvShape> shapes;       // the spline, then the arrowhead(s)
    QList<GvText> texts;         // edge labels
    QRectF bounds;
};

struct GvLayout {
    QRectF bounds;
    QList<GvNode> nodes;
    QList<GvEdge> edges;
    QList<GvShape> shapes;       // clusters, the background
    QList<GvText> texts;         // graph and cluster labels
    bool isEmpty() const { return nodes.isEmpty() && edges.isEmpty(); }
};

// Parses the SVG Graphviz writes (groups of class graph/cluster/node/edge; path with M/C/L/Z,
// polygon, polyline, ellipse, text) into scene coordinates. Pure data: safe off the GUI thread.
// Returns an empty layout when the text is not Graphviz SVG.
GvLayout parseGraphvizSvg(const QByteArray& svg);

// A restyle of a node (outline and text) or an edge (spline and arrowhead).
struct GvStyle {
    QColor fill, stroke, text;
    double width = 1;
    bool dashed = false;
    bool operator==(const GvStyle& o) const
    {
        return fill == o.fill && stroke == o.stroke && text == o.text && width == o.width && dashed == o.dashed;
    }
};

// The items of a layout added to a scene.
struct GvItems {
    QHash<QString, QGraphicsItem*> nodes;
    QMultiHash<QString, QGraphicsItem*> edges;   // key "from->to"
    QList<QGraphicsItem*> others;
};
GvItems addGraphvizItems(QGraphicsScene* scene, const GvLayout& layout);
// `item` from GvItems::nodes or ::edges.
void restyleItem(QGraphicsItem* item, const GvStyle& style);

}  // namespace tinyscope::ui
