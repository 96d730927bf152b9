#pragma once
// A line chart of a few series over a count (epochs, generations) that fills while a job runs:
// append points as they arrive and the y axis follows the data.
#include <QtCharts/QChartView>

#include <QList>

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

private:
    QList<QLineSeries*> series_;
    QValueAxis* x_;
    QValueAxis* y_;
    bool yFromZero_;
    double ylo_ = 1e300, yhi_ = -1e300;
};

}  // namespace tinyscope::ui
