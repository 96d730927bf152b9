#include "LiveLineChart.h"

#include "ChartLegend.h"
#include "ChartStyle.h"

#include <QCursor>
#include <QEvent>
#include <QFontMetricsF>
#include <QToolTip>
#include <QGraphicsLineItem>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

LiveLineChart::LiveLineChart(const QString& title, const QString& xTitle, const QString& yTitle, bool yFromZero,
                             QWidget* parent)
    : QChartView(parent), title_(title), yFromZero_(yFromZero)
{
    setRenderHint(QPainter::Antialiasing);
    QChart* c = styledChart();   // the title is the strip's: it wraps
    x_ = addValueAxis(c, Qt::AlignBottom, xTitle);
    y_ = addValueAxis(c, Qt::AlignLeft, yTitle);
    setChart(c);
    legend_ = new ChartLegend(c, this);   // over the chart's top margin (placeLegend)
    legend_->setTitle(title);
    setXSpan(1);
    setNiceRange(y_, 0, 1);
    connect(c, &QChart::plotAreaChanged, this, &LiveLineChart::fitTicks);
    fitAxisTitle(c, y_, {yTitle}, [this, yTitle](int form) {
        legend_->setTitle(form < 0 && !yTitle.isEmpty() ? QStringLiteral("%1 (y: %2)").arg(title_, yTitle) : title_);
    });
}

void LiveLineChart::resizeEvent(QResizeEvent* e)
{
    QChartView::resizeEvent(e);
    placeLegend();
}

bool LiveLineChart::event(QEvent* e)
{
    // The strip asks for another height (new entries, a font change, a longer title).
    if (e->type() == QEvent::LayoutRequest) placeLegend();
    return QChartView::event(e);
}

void LiveLineChart::placeLegend()
{
    const int w = std::max(1, width() - 28);
    int h = legend_->heightForWidth(w);
    if (h < 0) h = legend_->sizeHint().height();
    legend_->setGeometry(14, 8, w, h);
    legend_->raise();
    QMargins m = chart()->margins();
    m.setTop(8 + h + 2);
    if (m != chart()->margins()) chart()->setMargins(m);
}

void LiveLineChart::fitTicks()
{
    const QRectF plot = chart()->plotArea();
    if (plot.width() <= 0 || plot.height() <= 0) return;
    // A label's width: the widest count (the last) and a gap; a line's height and a gap.
    const QFontMetricsF xf(x_->labelsFont());
    const double label = xf.horizontalAdvance(QString::number(static_cast<long long>(std::ceil(xLast_)))) + 14;
    const int xTicks = std::clamp(static_cast<int>(plot.width() / label) + 1, 2, 11);
    const QFontMetricsF yf(y_->labelsFont());
    const int yTicks = std::clamp(static_cast<int>(plot.height() / (yf.height() + 6)) + 1, 2, 6);
    if (xTicks != xTicks_) {
        xTicks_ = xTicks;
        setXSpan(xLast_);
    }
    if (yTicks != yTicks_) {
        yTicks_ = yTicks;
        applyY();
    }
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
    applyY();
    if (x > x_->max()) setXSpan(x);
}

void LiveLineChart::applyY()
{
    if (ylo_ > yhi_) {
        setNiceRange(y_, 0, 1, yTicks_);
    } else if (yFromZero_) {
        setNiceRange(y_, 0, yhi_ > 0 ? yhi_ * 1.05 : 1, yTicks_);
    } else {
        const double pad = std::max(0.05, (yhi_ - ylo_) * 0.05);
        setNiceRange(y_, ylo_ - pad, yhi_ + pad, yTicks_);
    }
}

void LiveLineChart::clear()
{
    for (QLineSeries* s : series_) s->clear();
    ylo_ = 1e300;
    yhi_ = -1e300;
}

void LiveLineChart::setXSpan(double last)
{
    // 0..last, integer ticks only (a tick per step when there are few, else 1-2-5 steps), as many
    // as the plot's width has room for (fitTicks).
    xLast_ = std::max(1.0, last);
    setNiceTicks(x_, 0, xLast_, xTicks_, true);
}

int LiveLineChart::count(int series) const { return static_cast<int>(series_[series]->count()); }

}  // namespace tinyscope::ui
