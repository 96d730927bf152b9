#pragma once
// A line chart of a few series over a count (epochs, generations) that fills while a job runs:
// append points as they arrive and the y axis follows the data. Hovering a line shows the value of
// its nearest point; an optional dashed vertical marker shows one x (search playback's generation).
// Nothing is cut when the chart is small (presentation mode at 1280×720, issue 47): the title and
// the legend are a wrapping strip at the top (ChartLegend, not Qt Charts' one-line legend); the
// ticks are as many as the plot's width (height) has room for at the labels' font; a y title longer
// than the plot is high moves into the strip's title ("… (y: accuracy points)").
#include <QtCharts/QChartView>

#include <QList>

class QGraphicsLineItem;
class QLineSeries;
class QValueAxis;

namespace tinyscope::ui {

class ChartLegend;

class LiveLineChart : public QChartView {
    Q_OBJECT
public:
    // `yFromZero`: the y axis starts at 0 (losses); otherwise it hugs the data (accuracies).
    LiveLineChart(const QString& title, const QString& xTitle, const QString& yTitle, bool yFromZero,
                  QWidget* parent = nullptr);

    int addSeries(const QString& name, const QColor& colour, bool points = false);   // returns its index
    void append(int series, double x, double y);
    void clear();
    void setXSpan(double last);   // x axis 0..last, integer ticks (a tick per step when there are few)
    QValueAxis* xAxis() const { return x_; }
    QValueAxis* yAxis() const { return y_; }
    int count(int series) const;
    // A dashed vertical line at `x` (not in the legend); x < 0 removes it.
    void setMarker(double x);
    double marker() const { return markerX_; }
    // The hover text of the point of `series` nearest to x: "best so far — generation 4: 91.234".
    QString valueText(int series, double x) const;
    ChartLegend* legendStrip() const { return legend_; }   // title and legend entries

protected:
    void resizeEvent(QResizeEvent* e) override;
    bool event(QEvent* e) override;

private:
    void placeMarker();
    void placeLegend();
    void fitTicks();   // tick counts from the plot's size and the labels' font
    void applyY();

    QList<QLineSeries*> series_;
    QGraphicsLineItem* marker_ = nullptr;
    double markerX_ = -1;
    QValueAxis* x_;
    QValueAxis* y_;
    ChartLegend* legend_;
    QString title_;
    bool yFromZero_;
    double ylo_ = 1e300, yhi_ = -1e300;
    double xLast_ = 1;
    int xTicks_ = 11, yTicks_ = 6;   // the most ticks the axes have room for
};

}  // namespace tinyscope::ui
