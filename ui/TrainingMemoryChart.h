#pragma once
// The memory ledger per conv as a chart: stacked bars of what each conv keeps for training
// (clamp masks, int32 biases, saved inputs, int8 weights; KB, left axis) and, on the right axis,
// the running total "inference peak + extra memory of this conv and every later one" against
// the SRAM budget (dashed), both on the right axis ("KB in all", in the total's colour; the
// legend names the axis of each line): where the line crosses the budget, updating further back no
// longer fits; its left end is the scheme's total (what the training-budget search limits).
// Updates replace the series' values in place (no new chart per toggle). Every value axis has
// round ticks (ChartStyle's niceScale).
//
// Axes (issues 22, 47): fitted to the current scheme by default. setFixedAxes(true) fixes both
// value axes per model — scaled to the model's full update (every layer's bias and all weights,
// setReferenceLedger) or to the current scheme if that is larger — so switching schemes shows the
// change of magnitude (15 KB → 1 KB → 200 KB); a small scheme's bars are then a sliver, so the
// title says how much of the fixed axis they reach when that is under a tenth. Off by default:
// fixed, bias-only bars of 1 KB on a 200 KB axis read as a flat line.
#include "graph/MemoryLedger.h"

#include <QtCharts/QChartView>

#include <vector>

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
    // The ledger of the model's full update: the fixed axes' scale. Call before setLedger.
    void setReferenceLedger(const MemoryLedger& full);
    void setFixedAxes(bool fixed);
    bool fixedAxes() const { return fixedAxes_; }
    double leftAxisMaxKB() const;
    double rightAxisMaxKB() const;
    QValueAxis* leftAxis() const { return y_; }     // KB per conv: the bars
    QValueAxis* rightAxis() const { return y2_; }   // KB in all: the running total and the budget
    QLineSeries* budgetSeries() const { return budget_; }
    QString titleText() const;
    // What the "axes fixed" toggle says (its tooltip): the choice and its cost.
    static QString fixedAxesToolTip();

    // What is plotted (KB), for tests: per conv the four stacked values and the running total.
    QList<qreal> values(int set) const;   // 0 masks, 1 biases, 2 saved inputs, 3 weights
    // What hovering conv `index`'s bar says (exact bytes of each part), and the total line's point.
    QString barText(int index) const;
    QString totalText(int index) const;
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
    double refBarKB_ = 0, refTotalKB_ = 0;   // of the full update
    bool fixedAxes_ = false;
    std::vector<LedgerRow> rows_;   // of the ledger shown, for the hover texts
};

}  // namespace tinyscope::ui
