#include "PredictorScatter.h"

#include "ChartStyle.h"
#include "Palette.h"

#include "io/Text.h"
#include "predict/PredictionMetrics.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace tinyscope::ui {

namespace {

QString metricsLine(const std::vector<double>& predicted, const std::vector<double>& measured, const QString& freshNote)
{
    const bool fresh = !freshNote.isEmpty();
    const PredictionMetrics m = measurePredictions(predicted, measured);
    return QStringLiteral("<b>MAE</b> %1 · <b>RMSE</b> %2 accuracy points · <b>Pearson</b> r %3 · "
                          "<b>Kendall</b> τ %4 &nbsp;(%5 %6)")
               .arg(m.mae, 0, 'f', 4)
               .arg(m.rmse, 0, 'f', 4)
               .arg(m.pearson, 0, 'f', 4)
               .arg(m.kendall_tau, 0, 'f', 4)
               .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(m.count))))
               .arg(fresh ? QStringLiteral("fresh subnets") : QStringLiteral("held-out pairs")) +
           (fresh ? QStringLiteral("<br>MAE %1").arg(freshNote.toHtmlEscaped()) : QString());
}

QLineSeries* identityLine(double lo, double hi)
{
    auto* diag = new QLineSeries;
    diag->setName(QStringLiteral("y = x"));
    QPen pen(paletteColor("highlight"));
    pen.setWidth(2);
    pen.setStyle(Qt::DashLine);
    diag->setPen(pen);
    diag->append(lo, lo);
    diag->append(hi, hi);
    return diag;
}

}  // namespace

PredictorScatter::PredictorScatter(QWidget* parent) : QWidget(parent)
{
    view_ = new QChartView;
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setChart(styledChart(QStringLiteral("Predicted vs measured top-1 on the held-out split")));
    metrics_ = new QLabel;
    metrics_->setTextFormat(Qt::RichText);
    metrics_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    metrics_->setWordWrap(true);
    metrics_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);   // long notes wrap, never widen the window
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_, 1);
    layout->addWidget(metrics_);
}

void PredictorScatter::showPoints(const std::vector<double>& predicted, const std::vector<double>& measured, const QString& freshNote)
{
    const bool fresh = !freshNote.isEmpty();
    QChart* c = styledChart(fresh ? QStringLiteral("Predicted vs measured top-1 of fresh subnets on the supernet")
                                  : QStringLiteral("Predicted vs measured top-1 on the held-out split"));
    auto* pts = new QScatterSeries;
    pts->setName(fresh ? QStringLiteral("fresh subnets (measured on test images)") : QStringLiteral("held-out subnets"));
    pts->setMarkerSize(fresh ? 9 : 4);
    pts->setBorderColor(Qt::transparent);
    QColor ptColour = paletteColor("chart.series");
    ptColour.setAlpha(110);
    pts->setColor(ptColour);
    double lo = 1e9, hi = -1e9;
    QList<QPointF> points;
    points.reserve(static_cast<qsizetype>(predicted.size()));
    for (std::size_t i = 0; i < predicted.size(); ++i) {
        points.append(QPointF(measured[i], predicted[i]));
        lo = std::min({lo, measured[i], predicted[i]});
        hi = std::max({hi, measured[i], predicted[i]});
    }
    pts->append(points);
    connect(pts, &QScatterSeries::hovered, this, [](const QPointF& p, bool on) {
        showHoverText(on ? QStringLiteral("measured %1 %, predicted %2 % (error %3 points)")
                               .arg(p.x(), 0, 'f', 2)
                               .arg(p.y(), 0, 'f', 2)
                               .arg(p.y() - p.x(), 0, 'f', 2)
                         : QString());
    });
    points_ = static_cast<int>(points.size());
    if (lo > hi) lo = 80, hi = 95;
    QLineSeries* diag = identityLine(lo, hi);
    c->addSeries(pts);
    c->addSeries(diag);
    auto* x = new QValueAxis;
    x->setTitleText(QStringLiteral("measured top-1 (%)"));
    auto* y = new QValueAxis;
    y->setTitleText(QStringLiteral("predicted top-1 (%)"));
    for (QValueAxis* a : {x, y}) setNiceRange(a, lo - 0.2, hi + 0.2);   // the same round ticks on both: y = x stays square
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(pts), static_cast<QAbstractSeries*>(diag)}) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
    replaceChart(view_, c);
    if (predicted.empty())
        metrics_->clear();
    else
        metrics_->setText(metricsLine(predicted, measured, freshNote));
}

void PredictorScatter::setMeasuredBy(const QString& how) { metrics_->setToolTip(how); }

QString PredictorScatter::metricsText() const { return metrics_->text(); }

}  // namespace tinyscope::ui
