#pragma once
// The memory ledger per conv as a chart: stacked bars of what each conv keeps for training
// (clamp masks, int32 biases, saved inputs, int8 weights; KB, left axis) and, on the right axis,
// the running total "inference peak + extra memory of this conv and every later one" against
// the SRAM budget (dashed): where the line crosses the budget, updating further back no longer
// fits; its left end is the scheme's total (what the training-budget search limits).
// Updates replace the series' values in place (no new chart per toggle).
#include "graph/MemoryLedger.h"

#include <QtCharts/QChartView>

class QBarSet;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace tinyscope::ui {

class TrainingMemoryChart : public QChartView {
    Q_OBJECT
public:
    explicit TrainingMemoryChart(QWidget* parent = nullptr);

    void setLedger(const MemoryLedger& ledger, double budgetKB);
    void setBudget(double budgetKB);
    void clearLedger();

    // What is plotted (KB), for tests: per conv the four stacked values and the running total.
    QList<qreal> values(int set) const;   // 0 masks, 1 biases, 2 saved inputs, 3 weights
    QList<qreal> runningTotalKB() const;
    double budgetKB() const { return budgetKB_; }

private:
    void rescale();
    QBarSet* sets_[4];
    QStackedBarSeries* bars_;
    QLineSeries* total_;
    QLineSeries* budget_;
    QValueAxis* x_;
    QValueAxis* y_;
    QValueAxis* y2_;
    int categories_ = 0;
    double budgetKB_ = 256;
    double maxBarKB_ = 0, maxTotalKB_ = 0;
};

}  // namespace tinyscope::ui
