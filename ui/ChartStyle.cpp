#include "ChartStyle.h"

#include "Presentation.h"

#include <QCursor>
#include <QToolTip>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>

namespace tinyscope::ui {

QChart* styledChart(const QString& title)
{
    auto* c = new QChart;
    c->setTitle(title);
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignTop);
    c->setMargins(QMargins(4, 4, 4, 4));
    return c;
}

void replaceChart(QChartView* view, QChart* chart)
{
    QChart* old = view->chart();
    Presentation::style(chart);
    view->setChart(chart);
    delete old;
}

QValueAxis* addValueAxis(QChart* chart, Qt::Alignment side, const QString& title, const QString& format)
{
    auto* a = new QValueAxis;
    a->setTitleText(title);
    if (!format.isEmpty()) a->setLabelFormat(format);
    chart->addAxis(a, side);
    return a;
}

void showHoverText(const QString& text)
{
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(QCursor::pos(), text);
}

void showValueOnHover(QAbstractBarSeries* series, std::function<QString(int index, QBarSet* set)> text)
{
    QObject::connect(series, &QAbstractBarSeries::hovered, series, [text = std::move(text)](bool on, int index, QBarSet* set) {
        showHoverText(on && index >= 0 ? text(index, set) : QString());
    });
}

void addSeriesOn(QChart* chart, QAbstractSeries* series, std::initializer_list<QAbstractAxis*> axes)
{
    chart->addSeries(series);
    for (QAbstractAxis* a : axes) series->attachAxis(a);
    Presentation::styleSeries(chart, series);
}

}  // namespace tinyscope::ui
