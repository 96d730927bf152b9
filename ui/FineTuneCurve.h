#pragma once
// The Fine-tune tab's curve: top-1 on the test split before any step (epoch 0, as soon as the core
// has measured it) and after every epoch (left axis, percent), the epoch's mean training loss
// (right axis), and while an epoch trains the running mean of its training loss at fractional
// epochs (batches done / batches per epoch), so a run shows progress before its first epoch ends.
// The epoch axis has integer ticks only (0 … epochs). A point's values show on hover. When the
// model or the scheme changed after the run, the curve is marked stale (greyed, the title says so)
// instead of passing for the current scheme's. The title is not drawn in the chart (Qt Charts cuts
// a long one to "…"): titleChanged gives it to a wrapping label (the pane's ChartLegend).
#include "nn/finetune/FineTuneJob.h"

#include <QtCharts/QChartView>

#include <vector>

class QLineSeries;
class QValueAxis;

namespace tinyscope::ui {

class FineTuneCurve : public QChartView {
    Q_OBJECT
public:
    explicit FineTuneCurve(QWidget* parent = nullptr);

    // A run of `epochs` epochs starts; `keep` keeps the points shown (the same run resumed).
    void start(const QString& title, int epochs, bool keep);
    void setInitialTop1(double top1);                         // epoch 0: before any step (percent)
    void addBatches(const std::vector<FineTuneBatch>& batches);   // the running loss, in order
    void addEpoch(const FineTuneEpoch& e);                    // replaces an epoch already shown
    void showEpochs(const std::vector<FineTuneEpoch>& all);   // the whole run (a resumed one's history too)
    void clear();
    void setStale(bool stale, const QString& why = {});

    int points() const;                                      // epochs shown (epoch 0 not counted)
    const std::vector<FineTuneEpoch>& epochs() const { return epochs_; }
    bool hasInitialPoint() const { return initial_ >= 0; }
    double initialTop1() const { return initial_; }
    // The running-loss points shown: (fractional epoch, mean loss of the epoch so far); at most
    // kBatchPointsPerEpoch an epoch (the latest batch always).
    QList<QPointF> batchPoints() const;
    static constexpr int kBatchPointsPerEpoch = 40;
    bool stale() const { return stale_; }
    QString titleText() const { return titleText_; }
    QValueAxis* epochAxis() const { return x_; }
    QValueAxis* top1Axis() const { return yTop1_; }
    QValueAxis* lossAxis() const { return yLoss_; }

Q_SIGNALS:
    void titleChanged(const QString& title);

private:
    void redraw();
    void rescaleLoss();
    void hover(const QPointF& p, bool state, bool isLoss);

    QLineSeries* top1_;
    QLineSeries* loss_;
    QLineSeries* running_;
    QValueAxis* x_;
    QValueAxis* yTop1_;
    QValueAxis* yLoss_;
    std::vector<FineTuneEpoch> epochs_;
    double initial_ = -1;
    QString title_, titleText_;
    int span_ = 1;
    bool stale_ = false;
    QString staleWhy_;
    double lossHi_ = 0;
};

}  // namespace tinyscope::ui
