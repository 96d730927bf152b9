#pragma once
// How the panels' charts look (no animation, legend on top, tight margins), and swapping a view's
// chart for a rebuilt one.
#include <QString>
#include <QtCharts/QChart>

class QChartView;

namespace tinyscope::ui {

QChart* styledChart(const QString& title = QString());
// Shows `chart` in `view` and deletes the chart shown before (with its series and axes).
void replaceChart(QChartView* view, QChart* chart);

}  // namespace tinyscope::ui
