#pragma once
// A chart's legend as a strip of labels that wraps (FlowLayout) instead of Qt Charts' one-line
// legend, which cuts its labels ("inference p…") when the chart is narrow (1280×720 screens, 150 %
// scaling; issue 19). It hides the chart's own legend and follows its markers: a renamed series
// (e.g. "budget 256 KB") or a new one is shown after the next event-loop turn.
#include <QPointer>
#include <QWidget>
#include <QtCharts/QChart>

class QLabel;

namespace tinyscope::ui {

class ChartLegend : public QWidget {
    Q_OBJECT
public:
    explicit ChartLegend(QChart* chart, QWidget* parent = nullptr);

    QStringList texts() const;   // the entries shown, in order
    QList<QLabel*> labels() const { return labels_; }

    // Rebuilds the entries from the chart's legend markers (scheduled on every marker change).
    void refresh();

protected:
    void showEvent(QShowEvent* e) override;

private:
    void scheduleRefresh();

    QPointer<QChart> chart_;
    QList<QLabel*> labels_;
    bool scheduled_ = false;
};

// A widget holding `chartView` with its legend strip above it; the strip is returned in `legend`.
QWidget* withWrappingLegend(QWidget* chartView, QChart* chart, ChartLegend** legend = nullptr);

}  // namespace tinyscope::ui
