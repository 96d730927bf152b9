#pragma once
// Compare mode of the Design-space panel (issue 22): subnet A pinned, B the current subnet as the
// user edits it. A table of MACs, peak SRAM, params, flash, predicted and (once evaluated) measured
// top-1 for A, B and B − A (better in green, worse in red), and a chart of B / A per cost whose axis
// stays fixed while A is pinned (the space's largest subnet against A), so an edit moves the bars,
// never the scale.
#include "cost/SubnetComparison.h"
#include "space/SubnetConfig.h"

#include <QWidget>

#include <map>
#include <memory>
#include <optional>

class QChartView;
class QLabel;
class QTableWidget;

namespace tinyscope {
class AccuracyOracle;
class DesignSpace;
}  // namespace tinyscope

namespace tinyscope::ui {

class SubnetCompareView : public QWidget {
    Q_OBJECT
public:
    explicit SubnetCompareView(QWidget* parent = nullptr);
    ~SubnetCompareView() override;

    void pin(const DesignSpace& space, const SubnetConfig& a);
    void unpin();
    bool pinned() const { return a_.has_value(); }
    const SubnetConfig& pinnedConfig() const { return *a_; }
    void showB(const DesignSpace& space, const SubnetConfig& b);
    // Predicted top-1 of A and B (nullptr: none; a predictor of another space shows "–").
    void setOracle(std::shared_ptr<AccuracyOracle> oracle);
    // A measured top-1 (the evaluation box's result), shown whenever A or B is that subnet.
    void recordMeasured(const std::string& space, const SubnetConfig& c, double top1);

    // For tests: what the table and chart show.
    const std::vector<ComparedCost>& costs() const { return costs_; }
    QString cellText(int row, int column) const;
    double axisMax() const { return axisMax_; }
    static constexpr int kRows = 6;   // MACs, peak SRAM, params, flash, predicted, measured

private:
    std::optional<double> predicted(const SubnetConfig& c) const;
    std::optional<double> measured(const SubnetConfig& c) const;
    void redraw();

    std::unique_ptr<DesignSpace> space_;   // A's space (a copy: the workspace may change)
    std::optional<SubnetConfig> a_;
    SubnetConfig b_;
    CostSummary costA_, costB_;
    std::vector<ComparedCost> costs_;
    double axisMax_ = 1;
    std::shared_ptr<AccuracyOracle> oracle_;
    std::map<std::string, double> measured_;   // space + config JSON -> top-1
    QLabel* caption_;
    QTableWidget* table_;
    QChartView* chart_;
};

}  // namespace tinyscope::ui
