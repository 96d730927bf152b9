#include "ParetoChart.h"

#include "ChartStyle.h"
#include "Palette.h"

#include "io/Text.h"
#include "search/SearchHistory.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace tinyscope::ui {

namespace {

// The four costs a point can be plotted or coloured by: axis title, value shown, limit key.
struct Axis {
    const char* title;
    double (*shown)(const CostSummary&);
    const char* limitKey;
    double limitScale;   // limit value × limitScale = value shown
};
const Axis kAxes[] = {
    {"MACs (M)", [](const CostSummary& c) { return c.millionMacs(); }, "millionMACs", 1.0},
    {"peak SRAM (KB)", [](const CostSummary& c) { return c.peakKB(); }, "KBPeakMemory", 1.0},
    {"params (thousands)", [](const CostSummary& c) { return static_cast<double>(c.params) * 1e-3; }, "params", 1e-3},
    {"flash (KB)", [](const CostSummary& c) { return c.flashKB(); }, "KBFlash", 1.0},
};

struct Point {
    double x, colour, accuracy;
};

}  // namespace

ParetoChart::ParetoChart(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* axisRow = new QHBoxLayout;
    axisRow->addWidget(new QLabel(QStringLiteral("Pareto front: top-1 against")));
    axis_ = new QComboBox;
    for (const Axis& a : kAxes) axis_->addItem(QString::fromLatin1(a.title));
    axisRow->addWidget(axis_);
    axisRow->addStretch(1);
    layout->addLayout(axisRow);
    view_ = new QChartView;
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setChart(styledChart());
    layout->addWidget(view_, 1);
    connect(axis_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { redraw(); });
}

void ParetoChart::showResult(std::shared_ptr<const SearchResult> result)
{
    result_ = std::move(result);
    redraw();
}

void ParetoChart::redraw()
{
    const int xi = std::max(0, axis_->currentIndex());
    const int ci = xi == 1 ? 0 : 1;   // colour by peak SRAM, or by MACs when SRAM is on the x axis
    const Axis& ax = kAxes[xi];
    auto point = [&](const SearchCandidate& c) { return Point{ax.shown(c.cost), kAxes[ci].shown(c.cost), c.accuracy}; };
    std::vector<Point> pts;
    if (result_) {
        const auto& all = result_->evaluated;
        const std::size_t n = SearchRunRecord::kSamplePoints;   // as many as a stored run keeps
        const std::size_t step = all.size() > kMaxPoints ? (all.size() + n - 1) / n : 1;
        for (std::size_t i = 0; i < all.size(); i += step) pts.push_back(point(all[i]));
        for (std::size_t i : result_->paretoFront()) pts.push_back(point(all[i]));
    }
    points_ = static_cast<int>(pts.size());

    QChart* c = styledChart();
    c->legend()->setAlignment(Qt::AlignRight);
    double xlo = 1e300, xhi = -1e300, ylo = 1e300, yhi = -1e300, clo = 1e300, chi = -1e300;
    for (const Point& p : pts) {
        xlo = std::min(xlo, p.x);
        xhi = std::max(xhi, p.x);
        ylo = std::min(ylo, p.accuracy);
        yhi = std::max(yhi, p.accuracy);
        clo = std::min(clo, p.colour);
        chi = std::max(chi, p.colour);
    }
    QValueAxis* x = addValueAxis(c, Qt::AlignBottom, QString::fromLatin1(ax.title));
    QValueAxis* y = addValueAxis(c, Qt::AlignLeft, QStringLiteral("predicted top-1 (%)"), QStringLiteral("%.1f"));
    auto attach = [&](QAbstractSeries* s) { addSeriesOn(c, s, {x, y}); };
    // Colour = the other cost, in five bands (viridis).
    static const QColor band[5] = {paletteColor("pareto.band0"), paletteColor("pareto.band1"), paletteColor("pareto.band2"),
                                   paletteColor("pareto.band3"), paletteColor("pareto.band4")};
    if (!pts.empty()) {
        const double width = chi > clo ? (chi - clo) / 5 : 1;
        std::vector<QList<QPointF>> lists(5);
        for (const Point& p : pts) {
            const int b = std::clamp(static_cast<int>((p.colour - clo) / width), 0, 4);
            lists[static_cast<std::size_t>(b)].append(QPointF(p.x, p.accuracy));
        }
        const QString unit = ci == 1 ? QStringLiteral("KB SRAM") : QStringLiteral("M MACs");
        for (int b = 0; b < 5; ++b) {
            if (lists[static_cast<std::size_t>(b)].isEmpty()) continue;
            auto* s = new QScatterSeries;
            s->setName(QStringLiteral("%1–%2 %3").arg(clo + b * width, 0, 'f', 0).arg(clo + (b + 1) * width, 0, 'f', 0).arg(unit));
            s->setMarkerSize(5);
            s->setColor(band[b]);
            s->setBorderColor(Qt::transparent);
            s->append(lists[static_cast<std::size_t>(b)]);
            attach(s);
        }
        // The front for this axis: most accurate at each cost, swept by ascending cost.
        std::vector<Point> sorted = pts;
        std::sort(sorted.begin(), sorted.end(),
                  [](const Point& a, const Point& b) { return a.x < b.x || (a.x == b.x && a.accuracy > b.accuracy); });
        auto* front = new QLineSeries;
        front->setName(QStringLiteral("Pareto front"));
        QPen fp(paletteColor("chart.front"));
        fp.setWidth(2);
        front->setPen(fp);
        double bestAcc = -1e300;
        for (const Point& p : sorted)
            if (p.accuracy > bestAcc) {
                if (front->count() > 0) front->append(p.x, bestAcc);   // step
                front->append(p.x, p.accuracy);
                bestAcc = p.accuracy;
            }
        attach(front);
    }
    // The limit on the plotted cost.
    if (const Limit* l = result_ ? result_->constraints.find(ax.limitKey) : nullptr) {
        const double lim = l->max * ax.limitScale;
        auto* line = new QLineSeries;
        line->setName(QStringLiteral("limit %1").arg(QString::fromStdString(formatQuantity(lim))));
        QPen lp(paletteColor("search.error"));
        lp.setStyle(Qt::DashLine);
        lp.setWidth(2);
        line->setPen(lp);
        line->append(lim, ylo - 1);
        line->append(lim, yhi + 1);
        attach(line);
        xhi = std::max(xhi, lim);
    }
    if (result_ && result_->found) {
        const Point b = point(result_->best);
        auto* w = new QScatterSeries;
        w->setName(QStringLiteral("winner"));
        w->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        w->setMarkerSize(13);
        w->setColor(paletteColor("highlight"));
        w->setBorderColor(Qt::black);
        w->append(b.x, b.accuracy);
        attach(w);
    }
    if (xlo <= xhi) {
        const double pad = (xhi - xlo) * 0.04 + 1e-9;
        x->setRange(std::max(0.0, xlo - pad), xhi + pad);
        y->setRange(ylo - 0.2, yhi + 0.2);
        x->applyNiceNumbers();
    }
    replaceChart(view_, c);
}

}  // namespace tinyscope::ui
