#include "LiveLineChart.h"

#include "ChartStyle.h"

#include <QCursor>
#include <QToolTip>
#include <QGraphicsLineItem>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

LiveLineChart::LiveLineChart(const QString& title, const QString& xTitle, const QString& yTitle, bool yFromZero,
                             QWidget* parent)
    : QChartView(parent), yFromZero_(yFromZero)
{
    setRenderHint(QPainter::Antialiasing);
    QChart* c = styledChart(title);
    x_ = addValueAxis(c, Qt::AlignBottom, xTitle, QStringLiteral("%d"));
    y_ = addValueAxis(c, Qt::AlignLeft, yTitle, QStringLiteral("%.2f"));
    setChart(c);
}

int LiveLineChart::addSeries(const QString& name, const QColor& colour, bool points)
{
    auto* s = new QLineSeries;
    s->setName(name);
    s->setColor(colour);
    s->setPointsVisible(points);
    chart()->addSeries(s);
    s->attachAxis(x_);
    s->attachAxis(y_);
    series_.append(s);
    const int index = static_cast<int>(series_.size()) - 1;
    connect(s, &QLineSeries::hovered, this, [this, index](const QPointF& p, bool on) {
        if (on) QToolTip::showText(QCursor::pos(), valueText(index, p.x()), this);
        else QToolTip::hideText();
    });
    return index;
}

QString LiveLineChart::valueText(int series, double x) const
{
    const QLineSeries* s = series_[series];
    if (s->count() == 0) return QString();
    qsizetype best = 0;
    for (qsizetype k = 1; k < s->count(); ++k)
        if (std::abs(s->at(k).x() - x) < std::abs(s->at(best).x() - x)) best = k;
    const QPointF p = s->at(best);
    return QStringLiteral("%1 — %2 %3: %4").arg(s->name(), x_->titleText()).arg(p.x()).arg(p.y(), 0, 'f', 3);
}

void LiveLineChart::setMarker(double x)
{
    markerX_ = x;
    if (!marker_) {
        // A line on the chart, not a series: no legend entry (narrow charts cut long legends, issue 19).
        marker_ = new QGraphicsLineItem(chart());
        QPen pen(Qt::gray);
        pen.setStyle(Qt::DashLine);
        pen.setWidth(2);
        marker_->setPen(pen);
        marker_->setZValue(10);
        connect(chart(), &QChart::plotAreaChanged, this, &LiveLineChart::placeMarker);
        connect(x_, &QValueAxis::rangeChanged, this, &LiveLineChart::placeMarker);
        connect(y_, &QValueAxis::rangeChanged, this, &LiveLineChart::placeMarker);
    }
    placeMarker();
}

void LiveLineChart::placeMarker()
{
    if (!marker_) return;
    const bool shown = markerX_ >= 0 && !series_.isEmpty();
    marker_->setVisible(shown);
    if (!shown) return;
    const QRectF area = chart()->plotArea();
    const double px = chart()->mapToPosition(QPointF(markerX_, y_->min()), series_.front()).x();
    marker_->setLine(px, area.top(), px, area.bottom());
}

void LiveLineChart::append(int series, double x, double y)
{
    series_[series]->append(x, y);
    ylo_ = std::min(ylo_, y);
    yhi_ = std::max(yhi_, y);
    if (yFromZero_) {
        y_->setRange(0, yhi_ > 0 ? yhi_ * 1.1 : 1);
    } else {
        const double pad = std::max(0.05, (yhi_ - ylo_) * 0.05);
        y_->setRange(ylo_ - pad, yhi_ + pad);
    }
    if (x > x_->max()) setXSpan(x);
}

void LiveLineChart::clear()
{
    for (QLineSeries* s : series_) s->clear();
    ylo_ = 1e300;
    yhi_ = -1e300;
}

void LiveLineChart::setXSpan(double last)
{
    last = std::max(1.0, last);
    x_->setRange(0, last);
    x_->setTickCount(last <= 10 ? static_cast<int>(std::lround(last)) + 1 : 6);
}

int LiveLineChart::count(int series) const { return static_cast<int>(series_[series]->count()); }

}  // namespace tinyscope::ui
