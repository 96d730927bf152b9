#include "Presentation.h"

#include <QApplication>
#include <QEvent>
#include <QFont>
#include <QPen>
#include <QWidget>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QXYSeries>

#include <algorithm>

namespace tinyscope::ui {

namespace {

bool g_on = false;
QFont g_baseFont;   // the application font before the mode was first turned on

constexpr const char* kApplied = "tinyscope.presentationScale";

double applied(const QObject* o)
{
    const QVariant v = o->property(kApplied);
    return v.isValid() ? v.toDouble() : 1.0;
}

QFont scaled(QFont f, double ratio)
{
    if (f.pointSizeF() > 0) f.setPointSizeF(f.pointSizeF() * ratio);
    else if (f.pixelSize() > 0) f.setPixelSize(std::max(1, static_cast<int>(f.pixelSize() * ratio + 0.5)));
    return f;
}

void scaleSeries(QAbstractSeries* s, double ratio)
{
    if (auto* scatter = qobject_cast<QScatterSeries*>(s)) {
        scatter->setMarkerSize(scatter->markerSize() * ratio);
    } else if (auto* xy = qobject_cast<QXYSeries*>(s)) {
        QPen pen = xy->pen();
        pen.setWidthF(std::max(1.0, pen.widthF()) * ratio);
        xy->setPen(pen);
    }
}

// Re-applies a column's widths at the current scale whenever its font changes.
class WidthFollower : public QObject {
public:
    WidthFollower(QWidget* column, int minWidth, int maxWidth) : QObject(column), min_(minWidth), max_(maxWidth)
    {
        apply(column);
        column->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* e) override
    {
        if (e->type() == QEvent::FontChange) apply(static_cast<QWidget*>(watched));
        return false;
    }

private:
    void apply(QWidget* column) const
    {
        const double s = Presentation::scale();
        if (min_ > 0) column->setMinimumWidth(static_cast<int>(min_ * s + 0.5));
        if (max_ > 0) column->setMaximumWidth(static_cast<int>(max_ * s + 0.5));
    }
    int min_, max_;
};

}  // namespace

bool Presentation::on() { return g_on; }

void Presentation::followWidths(QWidget* column, int minWidth, int maxWidth) { new WidthFollower(column, minWidth, maxWidth); }

void Presentation::set(bool on)
{
    if (on == g_on) return;
    if (!g_on) g_baseFont = QApplication::font();
    g_on = on;
    QApplication::setFont(on ? scaled(g_baseFont, kScale) : g_baseFont);
    for (QWidget* w : QApplication::allWidgets())
        if (auto* view = qobject_cast<QChartView*>(w))
            if (view->chart()) style(view->chart());
}

void Presentation::style(QChart* chart)
{
    const double ratio = scale() / applied(chart);
    if (ratio == 1.0) return;
    chart->setTitleFont(scaled(chart->titleFont(), ratio));
    chart->legend()->setFont(scaled(chart->legend()->font(), ratio));
    for (QAbstractAxis* a : chart->axes()) {
        a->setLabelsFont(scaled(a->labelsFont(), ratio));
        a->setTitleFont(scaled(a->titleFont(), ratio));
    }
    for (QAbstractSeries* s : chart->series()) scaleSeries(s, ratio);
    chart->setProperty(kApplied, scale());
}

void Presentation::styleSeries(QChart* chart, QAbstractSeries* series)
{
    const double ratio = applied(chart);
    if (ratio != 1.0) scaleSeries(series, ratio);
}

}  // namespace tinyscope::ui
