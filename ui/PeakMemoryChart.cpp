#include "PeakMemoryChart.h"

#include "ChartStyle.h"
#include "Palette.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QLineSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <vector>

namespace tinyscope::ui {

PeakMemoryChart::PeakMemoryChart(QWidget* parent) : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(180);
}

void PeakMemoryChart::setReport(const CostReport& report, double budgetKB, double axisFloorKB)
{
    // A fresh chart each time: axes and series of the previous subnet go with the old one.
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignTop);
    c->setMargins(QMargins(4, 4, 4, 4));
    QChart* old = chart();
    setChart(c);
    delete old;
    auto* normal = new QBarSet(QStringLiteral("block term"));   // short: the legend stays whole in presentation mode (the axis says KB)
    auto* peak = new QBarSet(QStringLiteral("peak"));
    normal->setColor(paletteColor("chart.peak-term"));
    peak->setColor(paletteColor("highlight"));
    QStringList cats;
    double maxKB = std::max(budgetKB, axisFloorKB);
    for (const PeakTerm& t : report.peak_terms) {
        QString name = QString::fromStdString(t.name);
        if (name.startsWith(QStringLiteral("blocks."))) name = QStringLiteral("b") + name.mid(7);
        else if (name == QStringLiteral("first_conv")) name = QStringLiteral("stem");
        else if (name == QStringLiteral("feature_mix_layer")) name = QStringLiteral("mix");
        else if (name == QStringLiteral("classifier")) name = QStringLiteral("fc");
        cats << name;
        const double kb = t.elements / 1024.0;
        const bool isPeak = t.name == report.peak_layer;
        *normal << (isPeak ? 0.0 : kb);
        *peak << (isPeak ? kb : 0.0);
        maxKB = std::max(maxKB, kb);
    }
    auto* bars = new QStackedBarSeries();
    bars->append(normal);
    bars->append(peak);
    bars->setBarWidth(0.8);
    c->addSeries(bars);
    std::vector<std::pair<QString, std::int64_t>> terms;
    for (const PeakTerm& t : report.peak_terms) terms.emplace_back(QString::fromStdString(t.name), t.elements);
    showValueOnHover(bars, [terms](int index, QBarSet*) {
        if (index >= static_cast<int>(terms.size())) return QString();
        const auto& [name, bytes] = terms[static_cast<std::size_t>(index)];
        return QStringLiteral("%1: %2 KB (%3 bytes: its input + output activations, int8)")
            .arg(name)
            .arg(static_cast<double>(bytes) / 1024.0, 0, 'f', 1)
            .arg(bytes);
    });

    auto* budget = new QLineSeries();
    budget->setName(QStringLiteral("SRAM budget %1 KB").arg(budgetKB, 0, 'f', 0));
    QPen pen(paletteColor("chart.budget"));
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    budget->setPen(pen);
    budget->append(-0.5, budgetKB);
    budget->append(cats.size() - 0.5, budgetKB);
    c->addSeries(budget);

    auto* x = new QBarCategoryAxis();
    x->append(cats);
    x->setLabelsAngle(-90);
    x->setTruncateLabels(false);
    QFont f = x->labelsFont();
    f.setPointSize(7);
    x->setLabelsFont(f);
    auto* y = new QValueAxis();
    setNiceRange(y, 0, maxKB * 1.1);
    y->setTitleText(QStringLiteral("KB"));
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    bars->attachAxis(x);
    bars->attachAxis(y);
    // On a category axis, x = i is the centre of category i, so the line spans every slot.
    budget->attachAxis(x);
    budget->attachAxis(y);
}

}  // namespace tinyscope::ui
