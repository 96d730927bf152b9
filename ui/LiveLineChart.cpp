#include "LiveLineChart.h"

#include "ChartStyle.h"

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
    return static_cast<int>(series_.size()) - 1;
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
