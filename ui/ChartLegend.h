#pragma once
// A chart's legend as a strip of labels that wraps (FlowLayout) instead of Qt Charts' one-line
// legend, which cuts its labels ("inference p…") when the chart is narrow (1280×720 screens, 150 %
// scaling; issue 19). It hides the chart's own legend and follows its markers: a renamed series
// (e.g. "budget 256 KB") or a new one is shown after the next event-loop turn. An entry longer
// than the strip is wide wraps onto more lines, so a long entry never sets the chart's width
// (issue 47). It can also show the chart's title as a wrapping line above the entries (setTitle),
// for a title Qt Charts would cut to "…".
#include <QPointer>
#include <QWidget>
#include <QtCharts/QChart>

class QLabel;

namespace tinyscope::ui {
class FlowLayout;
}

namespace tinyscope::ui {

class ChartLegend : public QWidget {
    Q_OBJECT
public:
    explicit ChartLegend(QChart* chart, QWidget* parent = nullptr);

    QStringList texts() const;   // the entries shown, in order
    QList<QLabel*> labels() const { return labels_; }
    // A title line above the entries (empty: none); the owner keeps the chart's own title empty.
    void setTitle(const QString& title);
    QString title() const;
    QLabel* titleLabel() const { return title_; }

    // Rebuilds the entries from the chart's legend markers (scheduled on every marker change).
    void refresh();

protected:
    void showEvent(QShowEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void changeEvent(QEvent* e) override;

private:
    void scheduleRefresh();
    void fitLabels();   // entries wider than the strip wrap

    QPointer<QChart> chart_;
    QList<QLabel*> labels_;
    QLabel* title_;
    QWidget* entries_;
    FlowLayout* flow_;
    bool scheduled_ = false;
};

// A widget holding `chartView` with its legend strip above it; the strip is returned in `legend`.
QWidget* withWrappingLegend(QWidget* chartView, QChart* chart, ChartLegend** legend = nullptr);

}  // namespace tinyscope::ui
