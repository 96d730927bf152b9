#include "PerClassChart.h"

#include "ChartStyle.h"
#include "Palette.h"

#include "nn/measure/EvaluationTypes.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>

#include <QEvent>

#include <memory>
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
    if (shown_.get() != &r) shown_ = std::make_shared<const EvalResult>(r);
    if (&classNames_ != &classNames) classNames_ = classNames;
    stale_ = false;
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
    chart->setMargins(QMargins(4, 2, 8, 2));   // every pixel of height for the class names (presentation mode)
    chart->addSeries(series);
    chart->legend()->hide();
    auto* y = new QBarCategoryAxis;
    y->append(names);
    auto* x = new QValueAxis;
    setNiceRange(x, 0, 100);
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    replaceChart(this, chart);
    // The names drawn by the chart beside their bars, never cut (Qt Charts cut each to "..." or
    // dropped it when a bar was lower than a line of the presentation font; issue 47): the axis's
    // labels font, smaller where ten lines do not fit the plot's height.
    names_ = new CategoryNames(chart, y, names);
    return true;
}

void PerClassChart::changeEvent(QEvent* e)
{
    QChartView::changeEvent(e);
    if (e->type() != QEvent::FontChange || !shown_) return;
    const bool stale = stale_;
    const std::shared_ptr<const EvalResult> keep = shown_;
    showResult(*keep, classNames_);
    setStale(stale);
}

void PerClassChart::setStale(bool stale)
{
    stale_ = stale;
    if (QChart* c = chart()) {
        c->setTitle(stale ? title() + QStringLiteral(" — stale: an earlier subnet") : title());
        c->setOpacity(stale ? 0.45 : 1.0);
    }
}

}  // namespace tinyscope::ui
