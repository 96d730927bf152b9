#pragma once
// How the panels' charts look (no animation, legend on top, tight margins), and swapping a view's
// chart for a rebuilt one.
#include <QString>
#include <QtCharts/QChart>

#include <functional>
#include <initializer_list>

class QAbstractBarSeries;
class QBarSet;
class QChartView;
class QValueAxis;

namespace tinyscope::ui {

QChart* styledChart(const QString& title = QString());
// Shows `chart` in `view` and deletes the chart shown before (with its series and axes).
void replaceChart(QChartView* view, QChart* chart);
// A value axis with its title and label format (printf style; empty = Qt's), added to `chart` at `side`.
QValueAxis* addValueAxis(QChart* chart, Qt::Alignment side, const QString& title, const QString& format = QString());
// Value on hover: `text(index, set)` at the cursor while a bar of `series` is hovered (empty: none).
void showValueOnHover(QAbstractBarSeries* series, std::function<QString(int index, QBarSet* set)> text);
// The hover text at the cursor, or none when `text` is empty.
void showHoverText(const QString& text);
// Adds `series` to `chart`, attached to `axes`.
void addSeriesOn(QChart* chart, QAbstractSeries* series, std::initializer_list<QAbstractAxis*> axes);

}  // namespace tinyscope::ui
