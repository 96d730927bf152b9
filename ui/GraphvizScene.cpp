#include "GraphvizScene.h"

#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QPainter>
#include <QRegularExpression>
#include <QStyleOptionGraphicsItem>
#include <QTransform>
#include <QXmlStreamReader>

#include <optional>

namespace tinyscope::ui {

namespace {

QColor colourOf(const QStringView v)
{
    if (v.isEmpty() || v == u"none" || v == u"transparent") return {};
    QColor c = QColor::fromString(v);
    return c.isValid() ? c : QColor();
}

// Graphviz writes absolute M, C, L (and Z); relative forms are accepted too.
QPainterPath parsePath(const QString& d)
{
    QPainterPath p;
    static const QRegularExpression tok(QStringLiteral("([MmCcLlZz])|(-?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"));
    QList<double> nums;
    QChar cmd;
    QPointF cur;
    auto flush = [&] {
        const bool rel = cmd.isLower();
        const QPointF o = rel ? cur : QPointF();
        const QChar c = cmd.toUpper();
        if (c == u'M' || c == u'L') {
            for (int i = 0; i + 1 < nums.size(); i += 2) {
                const QPointF pt = o + QPointF(nums[i], nums[i + 1]);
                if (c == u'M' && i == 0) p.moveTo(pt);
                else p.lineTo(pt);
                cur = pt;
            }
        } else if (c == u'C') {
            for (int i = 0; i + 5 < nums.size(); i += 6) {
                const QPointF base = cmd.isLower() ? cur : QPointF();
                const QPointF c1 = base + QPointF(nums[i], nums[i + 1]), c2 = base + QPointF(nums[i + 2], nums[i + 3]),
                              e = base + QPointF(nums[i + 4], nums[i + 5]);
                p.cubicTo(c1, c2, e);
                cur = e;
            }
        } else if (c == u'Z') {
            p.closeSubpath();
        }
        nums.clear();
    };
    auto it = tok.globalMatch(d);
    while (it.hasNext()) {
        const auto m = it.next();
        if (m.hasCaptured(1)) {
            if (!cmd.isNull()) flush();
            cmd = m.captured(1).at(0);
            if (cmd.toUpper() == u'Z') flush();
        } else {
            nums.append(m.captured(2).toDouble());
        }
    }
    if (!cmd.isNull()) flush();
    return p;
}

QPolygonF parsePoints(const QString& s)
{
    QPolygonF poly;
    const QStringList parts = s.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    for (const QString& pt : parts) {
        const int comma = pt.indexOf(QLatin1Char(','));
        if (comma > 0) poly << QPointF(pt.left(comma).toDouble(), pt.mid(comma + 1).toDouble());
    }
    return poly;
}

// translate(x y) and scale(s t) of Graphviz's top group.
QTransform parseTransform(const QString& t)
{
    QTransform out;
    static const QRegularExpression re(QStringLiteral("(translate|scale)\\(([-0-9.eE]+)[ ,]+([-0-9.eE]+)\\)"));
    auto it = re.globalMatch(t);
    QTransform scale, translate;
    while (it.hasNext()) {
        const auto m = it.next();
        const double a = m.captured(2).toDouble(), b = m.captured(3).toDouble();
        if (m.captured(1) == QLatin1String("scale")) scale = QTransform::fromScale(a, b);
        else translate = QTransform::fromTranslate(a, b);
    }
    // SVG applies the list right to left to points: scale(...) translate(...) -> scale after translate.
    return translate * scale;
}

GvShape shapeFrom(const QXmlStreamAttributes& a, QPainterPath path, const QTransform& t)
{
    GvShape s;
    s.path = t.map(path);
    s.fill = colourOf(a.value(QLatin1String("fill")));
    s.stroke = a.hasAttribute(QLatin1String("stroke")) ? colourOf(a.value(QLatin1String("stroke"))) : QColor(Qt::black);
    if (a.hasAttribute(QLatin1String("stroke-width"))) s.width = a.value(QLatin1String("stroke-width")).toDouble();
    s.dashed = a.hasAttribute(QLatin1String("stroke-dasharray"));
    return s;
}

// Pen and brush for a shape: its own style, or `over` when given; dashes as Graphviz's 5,2.
void applyStyle(QPainter* p, const GvShape& s, const GvStyle* over, bool dashes, const QColor& fillOver)
{
    const QColor stroke = over ? over->stroke : s.stroke;
    const QColor fill = fillOver.isValid() ? fillOver : over ? over->fill : s.fill;
    QPen pen(stroke.isValid() ? stroke : Qt::transparent, over ? over->width : s.width);
    if (dashes && (over ? over->dashed : s.dashed)) pen.setDashPattern({5.0 / pen.widthF(), 2.0 / pen.widthF()});
    p->setPen(stroke.isValid() ? pen : QPen(Qt::NoPen));
    p->setBrush(fill.isValid() ? QBrush(fill) : Qt::NoBrush);
}

// A node or edge whose drawn style can be replaced (recolouring after a layout).
class StyledItem : public QGraphicsItem {
public:
    void restyle(const GvStyle& s)
    {
        if (style_ && *style_ == s) return;
        style_ = s;
        update();
    }

protected:
    std::optional<GvStyle> style_;
};

class NodeItem : public StyledItem {
public:
    explicit NodeItem(GvNode node) : node_(std::move(node))
    {
        bounds_ = node_.bounds;
        for (const GvText& t : node_.texts) {
            widths_.append(textWidth(t));
            bounds_ |= textRect(t, widths_.last());
        }
        bounds_.adjust(-2, -2, 2, 2);
    }
    QRectF boundingRect() const override { return bounds_; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        const double lod = option->levelOfDetailFromTransform(p->worldTransform());
        for (int i = 0; i < node_.shapes.size(); ++i) {
            const GvShape& s = node_.shapes[i];
            applyStyle(p, s, i == 0 && style_ ? &*style_ : nullptr, true, QColor());
            if (lod < 0.25) p->drawRect(s.path.boundingRect());   // far away: a box is all one sees
            else p->drawPath(s.path);
        }
        drawTexts(p, node_.texts, widths_, lod, style_ ? style_->text : QColor());
    }
    static void drawTexts(QPainter* p, const QList<GvText>& texts, const QList<double>& widths, double lod, const QColor& override)
    {
        for (int i = 0; i < texts.size(); ++i) {
            const GvText& t = texts[i];
            if (t.size * lod < 3.5) continue;   // unreadable: skip (the big win when zoomed out)
            p->setFont(fontOf(t));
            p->setPen(override.isValid() ? override : t.colour);
            const double x = t.anchor < 0 ? t.pos.x() : t.anchor == 0 ? t.pos.x() - widths[i] / 2 : t.pos.x() - widths[i];
            p->drawText(QPointF(x, t.pos.y()), t.text);
        }
    }
    static QFont fontOf(const GvText& t)
    {
        QFont f(t.family.isEmpty() ? QStringLiteral("DejaVu Sans") : t.family);
        f.setPixelSize(qMax(1, qRound(t.size)));   // scene units are Graphviz points
        return f;
    }
    static double textWidth(const GvText& t) { return QFontMetricsF(fontOf(t)).horizontalAdvance(t.text); }
    static QRectF textRect(const GvText& t, double w)
    {
        const double x = t.anchor < 0 ? t.pos.x() : t.anchor == 0 ? t.pos.x() - w / 2 : t.pos.x() - w;
        return QRectF(x, t.pos.y() - t.size, w, t.size * 1.4);
    }

private:
    GvNode node_;
    QRectF bounds_;
    QList<double> widths_;
};

class EdgeItem : public StyledItem {
public:
    explicit EdgeItem(GvEdge edge) : edge_(std::move(edge))
    {
        bounds_ = edge_.bounds.adjusted(-2, -2, 2, 2);
        for (const GvText& t : edge_.texts) {
            widths_.append(NodeItem::textWidth(t));
            bounds_ |= NodeItem::textRect(t, widths_.last());
        }
    }
    QRectF boundingRect() const override { return bounds_; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        const double lod = option->levelOfDetailFromTransform(p->worldTransform());
        for (int i = 0; i < edge_.shapes.size(); ++i) {
            const bool head = i > 0;   // arrowheads: filled with the line's colour, never dashed
            applyStyle(p, edge_.shapes[i], style_ ? &*style_ : nullptr, !head, head && style_ ? style_->stroke : QColor());
            if (lod < 0.5) {   // thin hairlines when zoomed out
                QPen pen = p->pen();
                pen.setCosmetic(true);
                p->setPen(pen);
            }
            p->drawPath(edge_.shapes[i].path);
        }
        NodeItem::drawTexts(p, edge_.texts, widths_, lod, QColor());
    }

private:
    GvEdge edge_;
    QRectF bounds_;
    QList<double> widths_;
};

class DecorationItem : public QGraphicsItem {
public:
    DecorationItem(QList<GvShape> shapes, QList<GvText> texts) : shapes_(std::move(shapes)), texts_(std::move(texts))
    {
        for (const GvShape& s : shapes_) bounds_ |= s.path.boundingRect().adjusted(-2, -2, 2, 2);
        for (const GvText& t : texts_) {
            widths_.append(NodeItem::textWidth(t));
            bounds_ |= NodeItem::textRect(t, widths_.last());
        }
    }
    QRectF boundingRect() const override { return bounds_; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        for (const GvShape& s : shapes_) {
            applyStyle(p, s, nullptr, true, QColor());
            p->drawPath(s.path);
        }
        NodeItem::drawTexts(p, texts_, widths_, option->levelOfDetailFromTransform(p->worldTransform()), QColor());
    }

private:
    QList<GvShape> shapes_;
    QList<GvText> texts_;
    QList<double> widths_;
    QRectF bounds_;
};

QRectF textBox(const GvText& t)
{
    const double w = t.size * 0.6 * t.text.size();   // rough: bounds only decide culling
    const double x = t.anchor < 0 ? t.pos.x() : t.anchor == 0 ? t.pos.x() - w / 2 : t.pos.x() - w;
    return QRectF(x, t.pos.y() - t.size, w, t.size * 1.3);
}

}  // namespace

GvLayout parseGraphvizSvg(const QByteArray& svg)
{
    GvLayout out;
    QXmlStreamReader xml(svg);
    QTransform t;
    enum class Owner { None, Graph, Cluster, Node, Edge };
    struct Frame {
        Owner owner;
    };
    QList<Frame> stack;
    auto owner = [&] { return stack.isEmpty() ? Owner::None : stack.last().owner; };
    auto addShape = [&](GvShape s) {
        switch (owner()) {
        case Owner::Node:
            out.nodes.last().bounds |= s.path.boundingRect();
            out.nodes.last().shapes.append(std::move(s));
            break;
        case Owner::Edge:
            out.edges.last().bounds |= s.path.boundingRect();
            out.edges.last().shapes.append(std::move(s));
            break;
        default:
            out.shapes.append(std::move(s));
        }
    };
    while (!xml.atEnd()) {
        const auto tok = xml.readNext();
        if (tok == QXmlStreamReader::EndElement) {
            if (xml.name() == QLatin1String("g") && !stack.isEmpty()) stack.removeLast();
            continue;
        }
        if (tok != QXmlStreamReader::StartElement) continue;
        const QStringView name = xml.name();
        const QXmlStreamAttributes a = xml.attributes();
        if (name == QLatin1String("g")) {
            const QStringView cls = a.value(QLatin1String("class"));
            Owner o = owner();
            if (cls == QLatin1String("graph")) {
                o = Owner::Graph;
                t = parseTransform(a.value(QLatin1String("transform")).toString());
            } else if (cls == QLatin1String("cluster")) {
                o = Owner::Cluster;
            } else if (cls == QLatin1String("node")) {
                o = Owner::Node;
                out.nodes.append(GvNode{});
            } else if (cls == QLatin1String("edge")) {
                o = Owner::Edge;
                out.edges.append(GvEdge{});
            }
            stack.append({o});
        } else if (name == QLatin1String("title")) {
            const QString title = xml.readElementText();
            if (owner() == Owner::Node && out.nodes.last().name.isEmpty()) out.nodes.last().name = title;
            else if (owner() == Owner::Edge && out.edges.last().from.isEmpty()) {
                const int arrow = title.indexOf(QStringLiteral("->"));
                const int dash = arrow >= 0 ? arrow : title.indexOf(QStringLiteral("--"));
                if (dash >= 0) {
                    out.edges.last().from = title.left(dash);
                    out.edges.last().to = title.mid(dash + 2);
                }
            }
        } else if (name == QLatin1String("path")) {
            addShape(shapeFrom(a, parsePath(a.value(QLatin1String("d")).toString()), t));
        } else if (name == QLatin1String("polygon") || name == QLatin1String("polyline")) {
            QPainterPath p;
            QPolygonF poly = parsePoints(a.value(QLatin1String("points")).toString());
            if (name == QLatin1String("polygon")) {
                // Graphviz's white page background: not drawn, the view's background is white.
                if (owner() == Owner::Graph && colourOf(a.value(QLatin1String("fill"))) == QColor(Qt::white)) continue;
                p.addPolygon(poly);
                p.closeSubpath();
            } else {
                p.addPolygon(poly);
            }
            addShape(shapeFrom(a, p, t));
        } else if (name == QLatin1String("ellipse")) {
            QPainterPath p;
            p.addEllipse(QPointF(a.value(QLatin1String("cx")).toDouble(), a.value(QLatin1String("cy")).toDouble()),
                         a.value(QLatin1String("rx")).toDouble(), a.value(QLatin1String("ry")).toDouble());
            addShape(shapeFrom(a, p, t));
        } else if (name == QLatin1String("text")) {
            GvText x;
            x.pos = t.map(QPointF(a.value(QLatin1String("x")).toDouble(), a.value(QLatin1String("y")).toDouble()));
            x.size = a.hasAttribute(QLatin1String("font-size")) ? a.value(QLatin1String("font-size")).toDouble() : 14.0;
            x.family = a.value(QLatin1String("font-family")).toString();
            const QColor c = colourOf(a.value(QLatin1String("fill")));
            x.colour = c.isValid() ? c : QColor(Qt::black);
            const QStringView anchor = a.value(QLatin1String("text-anchor"));
            x.anchor = anchor == QLatin1String("start") ? -1 : anchor == QLatin1String("end") ? 1 : 0;
            x.text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            x.text.replace(QChar(0xa0), QLatin1Char(' '));
            switch (owner()) {
            case Owner::Node:
                out.nodes.last().texts.append(std::move(x));
                break;
            case Owner::Edge:
                out.edges.last().texts.append(std::move(x));
                break;
            default:
                out.texts.append(std::move(x));
            }
        }
    }
    if (xml.hasError() && out.nodes.isEmpty()) return {};
    // The drawn content (the viewBox is in units before the top group's transform).
    QRectF content;
    for (const GvNode& n : out.nodes) content |= n.bounds;
    for (const GvEdge& e : out.edges) content |= e.bounds;
    for (const GvShape& s : out.shapes) content |= s.path.boundingRect();
    for (const GvText& x : out.texts) content |= textBox(x);
    out.bounds = content.adjusted(-4, -4, 4, 4);
    return out;
}

GvItems addGraphvizItems(QGraphicsScene* scene, const GvLayout& layout)
{
    GvItems items;
    if (!layout.shapes.isEmpty() || !layout.texts.isEmpty()) {
        auto* deco = new DecorationItem(layout.shapes, layout.texts);
        deco->setZValue(-1);
        scene->addItem(deco);
        items.others.append(deco);
    }
    for (const GvEdge& e : layout.edges) {
        auto* item = new EdgeItem(e);
        scene->addItem(item);
        items.edges.insert(e.from + QStringLiteral("->") + e.to, item);
    }
    for (const GvNode& n : layout.nodes) {
        auto* item = new NodeItem(n);
        item->setZValue(1);
        scene->addItem(item);
        items.nodes.insert(n.name, item);
    }
    return items;
}

void restyleItem(QGraphicsItem* item, const GvStyle& style) { static_cast<StyledItem*>(item)->restyle(style); }

}  // namespace tinyscope::ui
