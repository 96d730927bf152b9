#pragma once
// A line chart of a few series over a count (epochs, generations) that fills while a job runs:
// append points as they arrive and the y axis follows the data. Hovering a line shows the value of
// its nearest point; an optional dashed vertical marker shows one x (search playback's generation).
#include <QtCharts/QChartView>

#include <QList>

class QGraphicsLineItem;
class QLineSeries;
class QValueAxis;

namespace tinyscope::ui {

class LiveLineChart : public QChartView {
    Q_OBJECT
public:
    // `yFromZero`: the y axis starts at 0 (losses); otherwise it hugs the data (accuracies).
    LiveLineChart(const QString& title, const QString& xTitle, const QString& yTitle, bool yFromZero,
                  QWidget* parent = nullptr);

    int addSeries(const QString& name, const QColor& colour, bool points = false);   // returns its index
    void append(int series, double x, double y);
    void clear();
    void setXSpan(double last);   // x axis 0..last, a tick per step when there are few
    int count(int series) const;
    // A dashed vertical line at `x` (not in the legend); x < 0 removes it.
    void setMarker(double x);
    double marker() const { return markerX_; }
    // The hover text of the point of `series` nearest to x: "best so far — generation 4: 91.234".
    QString valueText(int series, double x) const;

private:
    void placeMarker();

    QList<QLineSeries*> series_;
    QGraphicsLineItem* marker_ = nullptr;
    double markerX_ = -1;
    QValueAxis* x_;
    QValueAxis* y_;
    bool yFromZero_;
    double ylo_ = 1e300, yhi_ = -1e300;
};

}  // namespace tinyscope::ui
