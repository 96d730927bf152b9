#pragma once
// Top-1 per class of an evaluation as horizontal bars (first class on top), the overall top-1 in
// the title. A result for another subnet than the selected one is marked stale: the title says so
// and the bars fade.
#include <QtCharts/QChartView>

#include <string>
#include <vector>

namespace tinyscope {
struct EvalResult;
}

namespace tinyscope::ui {

class PerClassChart : public QChartView {
    Q_OBJECT
public:
    explicit PerClassChart(QWidget* parent = nullptr);

    // Returns false (the chart unchanged) when `r` has no per-class counts.
    bool showResult(const EvalResult& r, const std::vector<std::string>& classNames);
    void setStale(bool stale);
    int bars() const { return bars_; }   // classes shown (tests)

private:
    QString title() const;

    double top1_ = 0;
    int bars_ = 0;
};

}  // namespace tinyscope::ui
