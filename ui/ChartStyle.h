#pragma once
// How the panels' charts look (no animation, legend on top, tight margins), swapping a view's
// chart for a rebuilt one, and round ticks on every value axis (niceScale: 1-2-5 steps, so an axis
// reads 85.8 86.0 … 86.8, never 85.88 86.70).
#include <QString>
#include <QtCharts/QChart>

#include <functional>
#include <initializer_list>
#include <QList>
#include <QStringList>

class QAbstractBarSeries;
class QBarCategoryAxis;
class QBarSet;
class QGraphicsSimpleTextItem;
class QChartView;
class QValueAxis;

namespace tinyscope::ui {

QChart* styledChart(const QString& title = QString());
// Shows `chart` in `view` and deletes the chart shown before (with its series and axes).
void replaceChart(QChartView* view, QChart* chart);
// A value axis with its title and label format (printf style; empty = Qt's), added to `chart` at `side`.
QValueAxis* addValueAxis(QChart* chart, Qt::Alignment side, const QString& title, const QString& format = QString());
// A round range and tick step for the values lo..hi: the step is 1, 2 or 5 × 10^k, at most
// `maxTicks` ticks, min and max multiples of the step (so every tick is); `integers`: a step of at
// least 1 (epochs, generations). decimals: what the step needs to print exactly.
struct NiceScale {
    double min = 0, max = 1, step = 1;
    int decimals = 0;
    int ticks() const;   // ticks from min to max
};
NiceScale niceScale(double lo, double hi, int maxTicks = 6, bool integers = false);
// Sets `axis` to niceScale(lo, hi, …): its range, ticks every step from min (QValueAxis::TicksDynamic)
// and labels with the decimals the step needs, then `suffix` ("×"). Every chart's value axes go through it.
NiceScale setNiceRange(QValueAxis* axis, double lo, double hi, int maxTicks = 6, bool integers = false,
                       const QString& suffix = QString());
// The range lo..hi kept as given (0..epochs), with round ticks inside it: multiples of niceScale's step.
NiceScale setNiceTicks(QValueAxis* axis, double lo, double hi, int maxTicks = 6, bool integers = false,
                       const QString& suffix = QString());
// The values at which `axis` draws its ticks and the labels it writes there (Qt's own rule for the
// label format: %d / %i take the value as an integer), for tests and hover texts.
QList<double> tickValues(const QValueAxis* axis);
QStringList tickLabels(const QValueAxis* axis);
// Value on hover: `text(index, set)` at the cursor while a bar of `series` is hovered (empty: none).
void showValueOnHover(QAbstractBarSeries* series, std::function<QString(int index, QBarSet* set)> text);
// The hover text at the cursor, or none when `text` is empty.
void showHoverText(const QString& text);
// A category axis's names drawn by the chart itself, never cut: Qt Charts gives a category label
// 1/(n+1) of the axis and cuts a longer one to "...", or drops it, when a category is narrower (on
// a vertical axis: lower) than its name (presentation mode at 1280×720, issue 47). The axis's own
// labels are hidden; each name is drawn beside its category: on a vertical axis right-aligned to
// the left of the plot, the chart's left margin grown to the longest name's width; on a horizontal
// axis centred below its category, the bottom margin grown to a line. Where the names do not fit
// the categories' spacing at the axis's labels font, their font shrinks until they do (to 6 pt at
// least). Follows the plot area and the labels font; owned by the chart. `axis` is already on it.
class CategoryNames : public QObject {
public:
    CategoryNames(QChart* chart, QBarCategoryAxis* axis, const QStringList& names);
    QList<QGraphicsSimpleTextItem*> items() const { return items_; }
    QFont font() const;   // the font the names are drawn in

private:
    void place();

    QChart* chart_;
    QBarCategoryAxis* axis_;
    QList<QGraphicsSimpleTextItem*> items_;
    QMargins base_;
    bool placing_ = false;
};
// The first of `forms` (an axis title, then shorter forms of it) that fits along the plot area's
// side of `axis` (its height for a vertical axis) at the axis's title font, set as the axis's
// title; -1 (the title hidden) when none fits. Redone whenever the plot area changes; `chosen`
// (optional) hears each change of the form shown.
void fitAxisTitle(QChart* chart, QAbstractAxis* axis, const QStringList& forms, std::function<void(int form)> chosen = {});
// Adds `series` to `chart`, attached to `axes`.
void addSeriesOn(QChart* chart, QAbstractSeries* series, std::initializer_list<QAbstractAxis*> axes);

}  // namespace tinyscope::ui
