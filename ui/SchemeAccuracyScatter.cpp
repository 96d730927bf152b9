#include "SchemeAccuracyScatter.h"

#include "ChartLegend.h"
#include "ChartStyle.h"
#include "Palette.h"

#include <QCursor>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tinyscope::ui {

namespace {

double kbValue(std::int64_t bytes) { return static_cast<double>(bytes) / 1024.0; }

}  // namespace

SchemeAccuracyScatter::SchemeAccuracyScatter(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    view_ = new QChartView;
    view_->setRenderHint(QPainter::Antialiasing);
    QChart* c = styledChart();
    // Short axis titles (a longer vertical one is cut to "…" on a low chart); the axes stay, the
    // series are rebuilt per redraw.
    x_ = addValueAxis(c, Qt::AlignBottom, QStringLiteral("extra memory, KB"));
    y_ = addValueAxis(c, Qt::AlignLeft, QStringLiteral("final top-1 %"));
    view_->setChart(c);
    view_->setMinimumSize(200, 120);   // the chart's own hint (title, legend) would widen the tab
    // The legend and the title wrap above the chart instead of squeezing it or being cut to "…".
    layout->addWidget(withWrappingLegend(view_, view_->chart(), &legend_));
    redraw();
}

void SchemeAccuracyScatter::addRun(const SchemeRun& r)
{
    auto same = std::find_if(runs_.begin(), runs_.end(), [&](const SchemeRun& x) { return x.run == r.run; });
    if (same != runs_.end()) runs_.erase(same);
    runs_.push_back(r);
    model_ = r.model;
    modelName_ = r.modelName;
    redraw();
}

void SchemeAccuracyScatter::setModel(const QString& model, const QString& modelName)
{
    if (model == model_ && modelName == modelName_) return;
    model_ = model;
    modelName_ = modelName;
    redraw();
}

void SchemeAccuracyScatter::setBudgetKB(double kbValue)
{
    budgetKB_ = kbValue;
    redraw();
}

std::vector<SchemeRun> SchemeAccuracyScatter::shownRuns() const
{
    std::vector<SchemeRun> out;
    for (const SchemeRun& r : runs_)
        if (r.model == model_) out.push_back(r);
    return out;
}

std::vector<SchemeRun> SchemeAccuracyScatter::front() const
{
    std::vector<SchemeRun> sorted = shownRuns();
    std::sort(sorted.begin(), sorted.end(), [](const SchemeRun& a, const SchemeRun& b) {
        return a.extra_bytes < b.extra_bytes || (a.extra_bytes == b.extra_bytes && a.top1 > b.top1);
    });
    std::vector<SchemeRun> out;
    for (const SchemeRun& r : sorted)
        if (out.empty() || r.top1 > out.back().top1) out.push_back(r);
    return out;
}

double SchemeAccuracyScatter::budgetLineKB() const
{
    const std::vector<SchemeRun> shown = shownRuns();
    if (shown.empty()) return std::numeric_limits<double>::quiet_NaN();
    // The inference working set is the model's (the same for every scheme of it): the latest run's.
    return budgetKB_ - kbValue(shown.back().inference_peak_bytes);
}

QString SchemeAccuracyScatter::titleText() const { return legend_->title(); }

QString SchemeAccuracyScatter::tip(const SchemeRun& r) const
{
    return QStringLiteral("%1\nQAS %2, %3 epoch(s): top-1 %4 %\nextra %5 KB + inference %6 KB = %7 KB")
        .arg(r.scheme, r.qas ? QStringLiteral("on") : QStringLiteral("off"))
        .arg(r.epochs)
        .arg(r.top1, 0, 'f', 2)
        .arg(kbValue(r.extra_bytes), 0, 'f', 1)
        .arg(kbValue(r.inference_peak_bytes), 0, 'f', 1)
        .arg(kbValue(r.total_bytes), 0, 'f', 1);
}

void SchemeAccuracyScatter::redraw()
{
    const std::vector<SchemeRun> shown = shownRuns();
    const int others = static_cast<int>(runs_.size() - shown.size());
    QString title = shown.empty() ? QStringLiteral("Top-1 vs extra memory: no scheme of this model fine-tuned yet")
                                  : QStringLiteral("Top-1 vs extra memory: %1 run(s)").arg(shown.size());
    if (others > 0) title += QStringLiteral(" (%1 more of other models)").arg(others);
    // The same chart, emptied: the wrapping legend above it (ChartLegend) follows its markers.
    QChart* c = view_->chart();
    c->removeAllSeries();
    legend_->setTitle(title);
    QValueAxis* x = x_;
    QValueAxis* y = y_;
    auto attach = [&](QAbstractSeries* s) { addSeriesOn(c, s, {x, y}); };
    double xlo = 0, xhi = 1, ylo = 0, yhi = 100;
    if (!shown.empty()) {
        xlo = 1e300, xhi = -1e300, ylo = 1e300, yhi = -1e300;
        for (const SchemeRun& r : shown) {
            xlo = std::min(xlo, kbValue(r.extra_bytes));
            xhi = std::max(xhi, kbValue(r.extra_bytes));
            ylo = std::min(ylo, r.top1);
            yhi = std::max(yhi, r.top1);
        }
    }
    // The budget line widens the axis unless it lies far right of the runs (a 256 KB budget for
    // schemes of a few KB): then the legend says where it is instead of squeezing the points.
    const double line = budgetLineKB();
    const bool lineShown = std::isfinite(line) && line <= std::max(2 * xhi, xhi + 8);
    if (lineShown) {
        xlo = std::min(xlo, line);
        xhi = std::max(xhi, line);
    }
    const double xpad = std::max(1.0, (xhi - xlo) * 0.08), ypad = std::max(1.0, (yhi - ylo) * 0.1);
    setNiceRange(x, std::max(0.0, xlo - xpad), xhi + xpad);
    setNiceRange(y, std::max(0.0, ylo - ypad), std::min(100.0, yhi + ypad));
    // The front first, under the points.
    if (!shown.empty()) {
        auto* f = new QLineSeries;
        f->setName(QStringLiteral("Pareto front"));
        QPen fp(paletteColor("chart.front"));
        fp.setWidth(2);
        f->setPen(fp);
        const std::vector<SchemeRun> fr = front();
        for (std::size_t i = 0; i < fr.size(); ++i) {
            if (i > 0) f->append(kbValue(fr[i].extra_bytes), fr[i - 1].top1);   // step
            f->append(kbValue(fr[i].extra_bytes), fr[i].top1);
        }
        f->append(x->max(), fr.back().top1);   // the best accuracy holds for any larger memory
        attach(f);
    }
    for (bool qas : {true, false}) {
        auto* s = new QScatterSeries;
        s->setName(qas ? QStringLiteral("QAS on") : QStringLiteral("QAS off (plain SGD)"));
        s->setMarkerSize(10);
        s->setMarkerShape(qas ? QScatterSeries::MarkerShapeCircle : QScatterSeries::MarkerShapeRectangle);
        s->setColor(paletteColor(qas ? "chart.series" : "pareto.band3"));
        s->setBorderColor(Qt::transparent);
        std::vector<SchemeRun> mine;
        for (const SchemeRun& r : shown)
            if (r.qas == qas) {
                s->append(kbValue(r.extra_bytes), r.top1);
                mine.push_back(r);
            }
        if (mine.empty()) {
            delete s;
            continue;
        }
        connect(s, &QScatterSeries::hovered, this, [this, mine](const QPointF& p, bool on) {
            if (!on) return QToolTip::hideText();
            const auto near = std::min_element(mine.begin(), mine.end(), [&](const SchemeRun& a, const SchemeRun& b) {
                return std::hypot(kbValue(a.extra_bytes) - p.x(), a.top1 - p.y()) < std::hypot(kbValue(b.extra_bytes) - p.x(), b.top1 - p.y());
            });
            QToolTip::showText(QCursor::pos(), tip(*near), view_);
        });
        attach(s);
    }
    if (std::isfinite(line)) {
        auto* b = new QLineSeries;
        b->setName((lineShown ? QString() : QStringLiteral("off the chart to the right: ")) + (line > 0 ? QStringLiteral("budget %1 KB − inference %2 KB = %3 KB extra")
                                  .arg(budgetKB_, 0, 'f', 0)
                                  .arg(budgetKB_ - line, 0, 'f', 1)
                                  .arg(line, 0, 'f', 1)
                            : QStringLiteral("budget %1 KB: below the inference peak %2 KB").arg(budgetKB_, 0, 'f', 0).arg(budgetKB_ - line, 0, 'f', 1)));
        QPen bp(paletteColor("highlight"));   // as the memory chart's budget line
        bp.setWidth(2);
        bp.setStyle(Qt::DashLine);
        b->setPen(bp);
        if (lineShown) {
            b->append(line, y->min());
            b->append(line, y->max());
        }
        attach(b);
    }
    legend_->refresh();   // the series are new: the strip rebuilds its entries
}

}  // namespace tinyscope::ui
