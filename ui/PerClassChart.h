#pragma once
// Top-1 per class of an evaluation as horizontal bars (first class on top), the overall top-1 in
// the title, each class's whole name beside its bar (CategoryNames: never cut to "…"). A result
// for another subnet than the selected one is marked stale: the title says so and the bars fade.
#include <QtCharts/QChartView>

#include <memory>
#include <string>
#include <vector>

namespace tinyscope {
struct EvalResult;
}

namespace tinyscope::ui {

class CategoryNames;

class PerClassChart : public QChartView {
    Q_OBJECT
public:
    explicit PerClassChart(QWidget* parent = nullptr);

    // Returns false (the chart unchanged) when `r` has no per-class counts.
    bool showResult(const EvalResult& r, const std::vector<std::string>& classNames);
    void setStale(bool stale);
    int bars() const { return bars_; }   // classes shown (tests)
    CategoryNames* classNames() const { return names_; }   // the class names beside the bars

protected:
    // A font change (presentation mode) rebuilds the chart: Qt Charts kept the category axis's
    // old width and cut every class name to "…" (issue 47).
    void changeEvent(QEvent* e) override;

private:
    QString title() const;

    double top1_ = 0;
    int bars_ = 0;
    bool stale_ = false;
    std::shared_ptr<const EvalResult> shown_;   // the result shown, for a rebuild
    std::vector<std::string> classNames_;
    CategoryNames* names_ = nullptr;   // owned by the chart
};

}  // namespace tinyscope::ui
