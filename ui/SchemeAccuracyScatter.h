#pragma once
// The Fine-tune tab's scatter: final top-1 against the extra training memory (KB) of every scheme
// fine-tuned this session on the current model, one point per run (a run = its checkpoint folder;
// running it again replaces its point), QAS on and off apart, the scheme in the tooltip; the
// Pareto front (most accurate for at most that memory) as a step line; and the SRAM budget.
// The budget limits what training needs at once, the inference working set plus the extra
// memory (the ledger's total_bytes), so on this extra-memory axis it is the line at
// budget − inference peak (docs/FINETUNING.md, "Fine-tune tab").
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

class QChartView;
class QValueAxis;

namespace tinyscope::ui {
class ChartLegend;
}

namespace tinyscope::ui {

struct SchemeRun {
    QString run;           // identity: the run's checkpoint folder
    QString model;         // identity of the model (ModelSource::describe)
    QString modelName;     // as the picker names it
    QString scheme;        // the scheme's text (describeScheme)
    bool qas = true;
    int epochs = 0;
    double top1 = 0;       // final, percent
    std::int64_t extra_bytes = 0, inference_peak_bytes = 0, total_bytes = 0;
};

class SchemeAccuracyScatter : public QWidget {
    Q_OBJECT
public:
    explicit SchemeAccuracyScatter(QWidget* parent = nullptr);

    void addRun(const SchemeRun& r);
    void setModel(const QString& model, const QString& modelName);   // only its runs are plotted
    void setBudgetKB(double kb);

    std::vector<SchemeRun> shownRuns() const;   // of the current model, in the order measured
    std::vector<SchemeRun> front() const;       // the Pareto front of those, by ascending extra memory
    int points() const { return static_cast<int>(shownRuns().size()); }
    double budgetLineKB() const;                // the budget on the extra-memory axis (NaN without runs)
    QString titleText() const;                  // shown above the legend (a chart title would be cut to "…")
    ChartLegend* legend() const { return legend_; }
    QChartView* view() const { return view_; }

private:
    void redraw();
    QString tip(const SchemeRun& r) const;

    QChartView* view_;
    QValueAxis* x_;
    QValueAxis* y_;
    ChartLegend* legend_ = nullptr;
    std::vector<SchemeRun> runs_;
    QString model_, modelName_;
    double budgetKB_ = 0;
};

}  // namespace tinyscope::ui
