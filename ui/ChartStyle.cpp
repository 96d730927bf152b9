#include "ChartStyle.h"

#include <QtCharts/QChartView>

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
    view->setChart(chart);
    delete old;
}

}  // namespace tinyscope::ui
