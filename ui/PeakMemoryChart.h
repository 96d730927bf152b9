#pragma once
// Bar chart of the per-layer peak-activation terms (KB) with the SRAM budget as a dashed line;
// the bar that sets the peak is drawn in red.
#include "cost/CostModel.h"

#include <QtCharts/QChartView>

namespace tinyscope::ui {

class PeakMemoryChart : public QChartView {
    Q_OBJECT
public:
    explicit PeakMemoryChart(QWidget* parent = nullptr);
    // `axisFloorKB`: the value axis reaches at least this far (compare mode keeps the axis fixed
    // while B is edited: the space's largest peak).
    void setReport(const CostReport& report, double budgetKB, double axisFloorKB = 0);
};

}  // namespace tinyscope::ui
