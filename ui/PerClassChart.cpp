#include "PerClassChart.h"

#include "ChartStyle.h"
#include "Palette.h"

#include "nn/measure/EvaluationTypes.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>

#include <vector>
#include <QtCharts/QValueAxis>

namespace tinyscope::ui {

PerClassChart::PerClassChart(QWidget* parent) : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(230);
}

QString PerClassChart::title() const { return QStringLiteral("Top-1 per class (all: %1 %)").arg(top1_, 0, 'f', 1); }

bool PerClassChart::showResult(const EvalResult& r, const std::vector<std::string>& classNames)
{
    top1_ = r.top1;
    bars_ = r.classes;
    if (r.classes == 0) return false;
    auto* set = new QBarSet(QStringLiteral("top-1 %"));
    set->setColor(paletteColor("chart.series"));
    QStringList names;
    for (int c = r.classes - 1; c >= 0; --c) {
        *set << r.classTop1(c);
        names << QString::fromStdString(className(classNames, c));
    }
    auto* series = new QHorizontalBarSeries;
    series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    std::vector<QString> tips;   // in bar order (last class first)
    for (int c = r.classes - 1; c >= 0; --c)
        tips.push_back(QStringLiteral("%1: %2 of %3 correct (%4 %)")
                           .arg(QString::fromStdString(className(classNames, c)))
                           .arg(r.class_correct[static_cast<std::size_t>(c)])
                           .arg(r.class_images[static_cast<std::size_t>(c)])
                           .arg(r.classTop1(c), 0, 'f', 2));
    showValueOnHover(series, [tips](int index, QBarSet*) { return index < static_cast<int>(tips.size()) ? tips[static_cast<std::size_t>(index)] : QString(); });
    QChart* chart = styledChart(title());
    chart->addSeries(series);
    chart->legend()->hide();
    auto* y = new QBarCategoryAxis;
    y->append(names);
    auto* x = new QValueAxis;
    x->setRange(0, 100);
    x->setTickCount(6);
    x->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    replaceChart(this, chart);
    return true;
}

void PerClassChart::setStale(bool stale)
{
    if (QChart* c = chart()) {
        c->setTitle(stale ? title() + QStringLiteral(" — stale: an earlier subnet") : title());
        c->setOpacity(stale ? 0.45 : 1.0);
    }
}

}  // namespace tinyscope::ui
