#pragma once
// The Fine-tune tab's curve: top-1 on the test split after every epoch (left axis, percent) and the
// epoch's mean training loss (right axis), filled live as a run reports its epochs; a point's
// values show on hover. When the model or the scheme changed after the run, the curve is marked
// stale (greyed, the title says so) instead of passing for the current scheme's.
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
    void addEpoch(const FineTuneEpoch& e);                    // replaces an epoch already shown
    void showEpochs(const std::vector<FineTuneEpoch>& all);   // the whole run (a resumed one's history too)
    void clear();
    void setStale(bool stale, const QString& why = {});

    int points() const;                                      // epochs shown
    const std::vector<FineTuneEpoch>& epochs() const { return epochs_; }
    bool stale() const { return stale_; }
    QString titleText() const;

private:
    void redraw();
    void hover(const QPointF& p, bool state, bool isLoss);

    QLineSeries* top1_;
    QLineSeries* loss_;
    QValueAxis* x_;
    QValueAxis* yTop1_;
    QValueAxis* yLoss_;
    std::vector<FineTuneEpoch> epochs_;
    QString title_;
    int span_ = 1;
    bool stale_ = false;
    QString staleWhy_;
};

}  // namespace tinyscope::ui
