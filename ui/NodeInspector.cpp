#include "NodeInspector.h"

#include "Palette.h"
#include "graph/TrainingGraph.h"
#include "io/Text.h"
#include "viz/TrainingGraphDot.h"
#include "zoo/Network.h"

#include <QUrl>

namespace tinyscope::ui {

namespace {

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString shapeText(const TensorShape& s)
{
    QStringList d;
    for (int x : s) d << QString::number(x);
    return QStringLiteral("[") + d.join(QLatin1Char(',')) + QStringLiteral("]");
}

QString opLink(const TrainingGraph& g, int op)
{
    return QStringLiteral("<a href=\"op:%1\">%2</a>").arg(op).arg(esc(trainingGraphNodeName(g, op)));
}

const char* kindName(TensorKind k)
{
    switch (k) {
    case TensorKind::Activation:
        return "activation";
    case TensorKind::Parameter:
        return "parameter";
    case TensorKind::Constant:
        return "constant";
    }
    return "";
}

QString tensorRow(const TrainingGraph& g, int id, const QString& slot)
{
    const Tensor& t = g.tensor(id);
    QString what;
    if (t.kind == TensorKind::Parameter) what = QStringLiteral("<b>%1</b>").arg(esc(t.name));
    else if (t.kind == TensorKind::Constant) what = QStringLiteral("constant %1").arg(t.value);
    else if (t.producer >= 0) what = opLink(g, t.producer);
    else what = QStringLiteral("tensor %1").arg(id);
    return QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td align=right>%5</td><td>%6</td></tr>")
        .arg(slot, what, shapeText(t.shape), QString::fromLatin1(dtypeName(t.dtype)),
             QString::fromStdString(groupThousands(t.bytes())), QString::fromLatin1(kindName(t.kind)));
}

}  // namespace

int opIndexOfNodeName(const QString& name)
{
    const int hash = name.lastIndexOf(QLatin1Char('#'));
    if (hash < 0) return -1;
    bool ok = false;
    const int op = name.mid(hash + 1).toInt(&ok);
    return ok ? op : -1;
}

NodeInspector::NodeInspector(QWidget* parent) : QTextBrowser(parent)
{
    setOpenLinks(false);
    setOpenExternalLinks(false);
    document()->setDefaultStyleSheet(QStringLiteral(
        "h3 { margin: 0 0 4px 0; } table { border-collapse: collapse; } td, th { padding: 1px 4px; } "
        "th { text-align: left; color: %1; font-weight: normal; border-bottom: 1px solid %2; } "
        ".k { color: %1; } .tag { padding: 1px 4px; }").arg(paletteName("text.note"), paletteName("rule")));
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        const QString s = url.toString();
        if (s.startsWith(QStringLiteral("op:"))) Q_EMIT opLinkActivated(s.mid(3).toInt());
    });
    showHint(QStringLiteral("Click an op in the graph, or search for one, to see its attributes and tensors."));
}

void NodeInspector::showHint(const QString& html)
{
    op_ = -1;
    setHtml(QStringLiteral("<p style='color:%1'>%2</p>").arg(paletteName("text.caption"), html));
}

void NodeInspector::showOp(const TrainingGraph& g, int op, const Network* net)
{
    if (op < 0 || op >= static_cast<int>(g.ops.size())) {
        showHint(QStringLiteral("No such op."));
        return;
    }
    op_ = op;
    const Op& o = g.op(op);
    const TrainingGraphNodeClass cls = trainingGraphNodeClasses(g)[static_cast<std::size_t>(op)];
    const TrainingGraphNodeStyle& st = trainingGraphNodeStyle(cls);
    QString status = QString::fromLatin1(st.legend);
    for (const GraphOutput& out : g.outputs)
        if (out.tensor == o.output) status += QStringLiteral(": <b>%1</b>").arg(esc(out.info));

    QString h = QStringLiteral("<h3>%1 <span style='color:%2'>#%3</span></h3>").arg(QString::fromLatin1(opTypeName(o.kind)), paletteName("text.faint"), QString::number(op));
    h += QStringLiteral("<p><span class=tag style='background:%1; border:1px solid %2'>%3</span></p>")
             .arg(QString::fromLatin1(st.fill), QString::fromLatin1(st.border), status);
    h += QStringLiteral("<table>");
    h += QStringLiteral("<tr><td class=k>phase / role</td><td>%1 / %2</td></tr>")
             .arg(QString::fromLatin1(o.phase == Phase::Forward ? "forward" : o.phase == Phase::Loss ? "loss" : "backward"),
                  QString::fromLatin1(opRoleName(o.role)));
    if (o.layer >= 0) {
        QString layer = QStringLiteral("layer %1").arg(o.layer);
        if (net && o.layer < static_cast<int>(net->layers.size())) {
            const Layer& l = net->layer(o.layer);
            layer = esc(l.name) + (l.conv_index >= 0 ? QStringLiteral(" (conv %1, %2)").arg(l.conv_index).arg(esc(l.role)) : QString());
        }
        h += QStringLiteral("<tr><td class=k>from</td><td>%1</td></tr>").arg(layer);
    }
    if (!g.order.empty()) {
        const auto it = std::find(g.order.begin(), g.order.end(), op);
        if (it != g.order.end())
            h += QStringLiteral("<tr><td class=k>execution</td><td>step %1 of %2</td></tr>").arg(it - g.order.begin() + 1).arg(g.order.size());
    }
    h += QStringLiteral("</table>");

    h += QStringLiteral("<p><b>attributes</b></p>");
    if (o.attrs.empty()) {
        h += QStringLiteral("<p class=k>none</p>");
    } else {
        h += QStringLiteral("<table>");
        for (auto it = o.attrs.begin(); it != o.attrs.end(); ++it)
            h += QStringLiteral("<tr><td class=k>%1</td><td>%2</td></tr>").arg(esc(it.key()), esc(it.value().dump()));
        h += QStringLiteral("</table>");
    }

    const QString header = QStringLiteral("<tr><th></th><th>tensor</th><th>shape</th><th>dtype</th><th>bytes</th><th>kind</th></tr>");
    h += QStringLiteral("<p><b>inputs</b></p><table>") + header;
    for (std::size_t s = 0; s < o.inputs.size(); ++s) h += tensorRow(g, o.inputs[s], QString::number(s));
    h += QStringLiteral("</table><p><b>output</b></p><table>") + header + tensorRow(g, o.output, QStringLiteral("→"));
    h += QStringLiteral("</table>");

    QStringList consumers;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        for (int in : g.ops[i].inputs)
            if (in == o.output) {
                consumers << opLink(g, static_cast<int>(i));
                break;
            }
    h += QStringLiteral("<p><b>read by</b> %1</p>").arg(consumers.isEmpty() ? QStringLiteral("—") : consumers.join(QStringLiteral(", ")));
    setHtml(h);
}

}  // namespace tinyscope::ui
