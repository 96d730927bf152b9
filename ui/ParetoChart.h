#pragma once
// The Search panel's Pareto chart: predicted top-1 against a cost chosen in a combo box (MACs,
// peak SRAM, params, flash), every evaluated subnet coloured by another cost in five bands, the
// front for the plotted cost as a step line, the limit on that cost as a dashed line and the
// winner as a large square. Holds the typed SearchResult it shows and redraws on an axis change.
#include "search/SearchResult.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QChartView;

namespace tinyscope::ui {

class ParetoChart : public QWidget {
    Q_OBJECT
public:
    explicit ParetoChart(QWidget* parent = nullptr);

    // nullptr clears the chart. Over kMaxPoints evaluated subnets, an even spread of 2,000 is plotted.
    void showResult(std::shared_ptr<const SearchResult> result);
    int points() const { return points_; }   // points plotted (evaluated + front)
    static constexpr std::size_t kMaxPoints = 20000;

private:
    void redraw();

    QComboBox* axis_;
    QChartView* view_;
    std::shared_ptr<const SearchResult> result_;
    int points_ = 0;
};

}  // namespace tinyscope::ui
