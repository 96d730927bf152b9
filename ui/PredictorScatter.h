#pragma once
// Predicted against measured top-1 of the same subnets, with the y = x line and the metrics (MAE,
// RMSE, Pearson r, Kendall τ) under it. Two variants: the held-out split of the accuracy dataset,
// or a check on fresh subnets measured on a supernet (a non-empty note: title, legend and metrics
// say so, the note says what was measured).
#include <QWidget>

#include <vector>

class QChartView;
class QLabel;

namespace tinyscope::ui {

class PredictorScatter : public QWidget {
    Q_OBJECT
public:
    explicit PredictorScatter(QWidget* parent = nullptr);

    // `predicted[i]` and `measured[i]` (percent) are one subnet; empty clears to the y = x line only.
    void showPoints(const std::vector<double>& predicted, const std::vector<double>& measured, const QString& freshNote = {});
    void clear() { showPoints({}, {}); }
    void setMeasuredBy(const QString& how);   // the metrics line's tooltip

    int points() const { return points_; }
    QString metricsText() const;

private:
    QChartView* view_;
    QLabel* metrics_;
    int points_ = 0;
};

}  // namespace tinyscope::ui
