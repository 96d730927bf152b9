#include "GraphFindBar.h"

#include "ToolButton.h"

#include "FlowLayout.h"
#include "Palette.h"
#include "viz/TrainingGraphDot.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>

namespace tinyscope::ui {

namespace {

QLabel* swatch(const QString& text, const QString& fill, const QString& border, bool dashed)
{
    auto* l = new QLabel(text);
    l->setStyleSheet(QStringLiteral("QLabel { background: %1; border: 1px %3 %2; border-radius: 3px; padding: 1px 6px; }")
                         .arg(fill, border, dashed ? QStringLiteral("dashed") : QStringLiteral("solid")));
    return l;
}

}  // namespace

GraphFindBar::GraphFindBar(QWidget* parent) : QWidget(parent)
{
    search_ = new QLineEdit;
    search_->setPlaceholderText(QStringLiteral("Find an op, layer or parameter (blocks.8.pw1, v9_conv_0_weight) — Enter: next"));
    search_->setToolTip(QStringLiteral("Matches op names (nn.conv2d#812), layer names and parameter names; Enter steps through the matches"));
    search_->setClearButtonEnabled(true);
    note_ = new QLabel;
    note_->setMinimumWidth(70);
    QToolButton* fit = toolButton(QStringLiteral("Fit"), QStringLiteral("Show the whole graph (or double-click the background)"));
    QToolButton* zoomIn = toolButton(QStringLiteral("+"), QStringLiteral("Zoom in (or the mouse wheel)"));
    QToolButton* zoomOut = toolButton(QStringLiteral("−"), QStringLiteral("Zoom out (or the mouse wheel)"));
    auto* bar = new QHBoxLayout(this);
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(search_, 1);
    bar->addWidget(note_);
    bar->addWidget(zoomOut);
    bar->addWidget(zoomIn);
    bar->addWidget(fit);
    connect(fit, &QToolButton::clicked, this, &GraphFindBar::fitRequested);
    connect(zoomIn, &QToolButton::clicked, this, [this] { Q_EMIT zoomRequested(1.25); });
    connect(zoomOut, &QToolButton::clicked, this, [this] { Q_EMIT zoomRequested(0.8); });
    connect(search_, &QLineEdit::returnPressed, this, [this] { Q_EMIT findRequested(search_->text()); });
    connect(search_, &QLineEdit::textChanged, note_, &QLabel::clear);
}

void GraphFindBar::restart() { lastHit_ = -1; }

int GraphFindBar::next(const QString& text, int count, const std::function<QString(int)>& itemText)
{
    const QString q = text.trimmed();
    if (q.isEmpty() || count == 0) return -1;
    if (q != lastQuery_) lastHit_ = -1;
    lastQuery_ = q;
    int matches = 0, hit = -1, rank = 0, first = -1;
    for (int i = 0; i < count; ++i) {
        if (!itemText(i).contains(q, Qt::CaseInsensitive)) continue;
        ++matches;
        if (first < 0) first = i;
        if (hit < 0 && i > lastHit_) {
            hit = i;
            rank = matches;
        }
    }
    if (hit < 0 && first >= 0) {   // wrap around
        hit = first;
        rank = 1;
    }
    if (hit < 0) {
        note_->setText(QStringLiteral("no match"));
        return -1;
    }
    lastHit_ = hit;
    note_->setText(QStringLiteral("%1 of %2").arg(rank).arg(matches));
    return hit;
}

QWidget* trainingGraphLegend()
{
    QList<QWidget*> legend;
    const char* keys[] = {"forward", "loss", "backward", "gradient", "pruned"};
    int k = 0;
    for (TrainingGraphNodeClass c : {TrainingGraphNodeClass::Forward, TrainingGraphNodeClass::Loss, TrainingGraphNodeClass::Backward,
                                     TrainingGraphNodeClass::GradientOutput, TrainingGraphNodeClass::Pruned}) {
        const TrainingGraphNodeStyle& s = trainingGraphNodeStyle(c);
        legend << swatch(QString::fromLatin1(s.legend), QString::fromLatin1(s.fill), QString::fromLatin1(s.border), s.dashed);
        legend.last()->setObjectName(QStringLiteral("legend-") + QLatin1String(keys[k++]));
    }
    const TrainingGraphNodeStyle& back = trainingGraphNodeStyle(TrainingGraphNodeClass::Backward);
    legend << swatch(QStringLiteral("▣ block of ops (click: expand)"), QString::fromLatin1(back.fill), QString::fromLatin1(back.border), false);
    legend.last()->setObjectName(QStringLiteral("legend-group"));
    legend.last()->setToolTip(QStringLiteral("The ops of one block and pass drawn as one node; click it to draw its ops"));
    legend << new QLabel(QStringLiteral("<span style='color:%1'>━━</span> saved for backward")
                             .arg(QString::fromLatin1(trainingGraphEdgeStyle(TrainingGraphEdgeClass::Saved).color)));
    legend.last()->setObjectName(QStringLiteral("legend-saved"));
    legend << new QLabel(QStringLiteral("<span style='color:%1'>▢</span> changed by the last edit").arg(paletteColor("highlight").name()));
    legend.last()->setObjectName(QStringLiteral("legend-changed"));
    legend.last()->setToolTip(QStringLiteral("Ops that appeared (or changed colour) with the last scheme edit; the status line counts those that disappeared"));
    return wrappingRow(legend);
}

}  // namespace tinyscope::ui
