#include "ChartLegend.h"

#include "FlowLayout.h"

#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>
#include <QtCharts/QLegend>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QLegendMarker>

namespace tinyscope::ui {

ChartLegend::ChartLegend(QChart* chart, QWidget* parent) : QWidget(parent), chart_(chart)
{
    new FlowLayout(this, 10, 2);
    QSizePolicy p(QSizePolicy::Preferred, QSizePolicy::Preferred);
    p.setHeightForWidth(true);
    setSizePolicy(p);
    chart->legend()->hide();
    scheduleRefresh();   // the chart makes its markers once its series reach the scene
}

void ChartLegend::showEvent(QShowEvent* e)
{
    QWidget::showEvent(e);
    scheduleRefresh();
}

QStringList ChartLegend::texts() const
{
    QStringList out;
    for (const QLabel* l : labels_) out << l->property("entry").toString();
    return out;
}

void ChartLegend::scheduleRefresh()
{
    if (scheduled_) return;
    scheduled_ = true;
    QTimer::singleShot(0, this, [this] { refresh(); });
}

void ChartLegend::refresh()
{
    scheduled_ = false;
    for (QLabel* l : labels_) delete l;
    labels_.clear();
    if (!chart_) return;
    QLegend* legend = chart_->legend();
    legend->hide();
    for (QLegendMarker* m : legend->markers()) {
        connect(m, &QLegendMarker::labelChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        connect(m, &QLegendMarker::brushChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        connect(m, &QLegendMarker::penChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        connect(m->series(), &QAbstractSeries::visibleChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        // (The markers' own visibility follows the hidden legend: the series' is the one that counts.)
        if (!m->series()->isVisible() || m->label().isEmpty()) continue;
        const QAbstractSeries::SeriesType t = m->series()->type();
        const bool line = t == QAbstractSeries::SeriesTypeLine || t == QAbstractSeries::SeriesTypeSpline;
        const QColor c = m->brush().style() != Qt::NoBrush ? m->brush().color() : m->pen().color();
        auto* l = new QLabel(QStringLiteral("<span style='color:%1'>%2</span>&nbsp;%3")
                                 .arg(c.name(), line ? QStringLiteral("━━") : QStringLiteral("■"), m->label().toHtmlEscaped()));
        l->setTextFormat(Qt::RichText);
        l->setProperty("entry", m->label());
        layout()->addWidget(l);
        labels_ << l;
    }
    updateGeometry();
}

QWidget* withWrappingLegend(QWidget* chartView, QChart* chart, ChartLegend** legend)
{
    auto* box = new QWidget;
    auto* l = new QVBoxLayout(box);
    l->setContentsMargins(0, 0, 0, 0);
    l->setSpacing(0);
    auto* strip = new ChartLegend(chart, box);
    strip->setContentsMargins(8, 2, 8, 0);
    l->addWidget(strip);
    l->addWidget(chartView, 1);
    if (legend) *legend = strip;
    return box;
}

}  // namespace tinyscope::ui
