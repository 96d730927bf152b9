#include "ParetoChart.h"

#include "ChartLegend.h"
#include "ChartStyle.h"
#include "Palette.h"

#include "io/Text.h"
#include "search/SearchHistory.h"

#include <QComboBox>
#include <QCursor>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

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

QString counted(const std::map<int, int>& m)
{
    QStringList parts;
    for (const auto& [value, n] : m) parts << QStringLiteral("%1 ×%2").arg(value).arg(n);
    return parts.join(QStringLiteral(", "));
}

QString originWords(CandidateOrigin o)
{
    switch (o) {
    case CandidateOrigin::initial: return QStringLiteral("initial random population");
    case CandidateOrigin::mutation: return QStringLiteral("mutation child");
    case CandidateOrigin::crossover: return QStringLiteral("crossover child");
    case CandidateOrigin::random: return QStringLiteral("random draw");
    case CandidateOrigin::unknown: break;
    }
    return QStringLiteral("origin not recorded");
}

}  // namespace

QString configInWords(const SubnetConfig& c, const DesignSpace& space)
{
    QStringList parts;
    parts << QStringLiteral("resolution %1 px").arg(c.image_size);
    if (c.wid >= 0 && c.wid < static_cast<int>(space.width_mult_list.size()))
        parts << QStringLiteral("width ×%1").arg(space.width_mult_list[static_cast<std::size_t>(c.wid)]);
    QStringList depths;
    for (int s = 0; s < space.numStages(); ++s) depths << QString::number(c.activeDepth(space, s));
    if (!depths.isEmpty()) parts << QStringLiteral("depths %1").arg(depths.join(QStringLiteral("·")));
    std::map<int, int> ks, es;
    int blocks = 0;
    for (int b = 0; b < static_cast<int>(c.ks.size()); ++b) {
        if (!c.blockActive(space, b)) continue;
        ++blocks;
        ++ks[c.ks[static_cast<std::size_t>(b)]];
        if (b < static_cast<int>(c.e.size())) ++es[c.e[static_cast<std::size_t>(b)]];
    }
    return parts.join(QStringLiteral(", ")) +
           QStringLiteral(", %1 blocks: kernel %2; expand %3").arg(blocks).arg(counted(ks), counted(es));
}

ParetoChart::ParetoChart(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* axisRow = new QHBoxLayout;
    axisRow->addWidget(new QLabel(QStringLiteral("Pareto front: top-1 against")));
    axis_ = new QComboBox;
    axis_->setToolTip(QStringLiteral("The cost on the x axis; the points are coloured by peak SRAM (or by MACs when SRAM is on the x axis)"));
    for (const Axis& a : kAxes) axis_->addItem(QString::fromLatin1(a.title));
    axisRow->addWidget(axis_);
    axisRow->addStretch(1);
    layout->addLayout(axisRow);
    view_ = new QChartView;
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setToolTip(QStringLiteral("Predicted top-1 (%) against the cost chosen above. Hover a point for its subnet and numbers; "
                                     "click it to load it into the Design-space panel"));
    QChart* c = styledChart();
    x_ = addValueAxis(c, Qt::AlignBottom, QString::fromLatin1(kAxes[0].title));
    y_ = addValueAxis(c, Qt::AlignLeft, QStringLiteral("predicted top-1 (%)"), QStringLiteral("%.1f"));
    view_->setChart(c);
    // The whole y title where the plot is tall enough, a shorter form where not (presentation mode at
    // 1280×720 cut it to "predicted top..."; issue 47); the points are the predictor's either way.
    fitAxisTitle(c, y_, {QStringLiteral("predicted top-1 (%)"), QStringLiteral("pred. top-1 (%)"), QStringLiteral("top-1 (%)")});
    layout->addWidget(withWrappingLegend(view_, c, &legend_), 1);   // the legend wraps, never cut
    connect(axis_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { redraw(); });
}

void ParetoChart::showResult(std::shared_ptr<const SearchResult> result, const DesignSpace& space)
{
    result_ = std::move(result);
    space_ = space;
    generation_ = result_ && !result_->history.empty() ? result_->history.back().generation : -1;
    redraw();
}

void ParetoChart::setGeneration(int g)
{
    if (!result_ || result_->history.empty()) return;
    g = std::clamp(g, 0, result_->history.back().generation);
    if (g == generation_) return;
    generation_ = g;
    redraw();
}

QString ParetoChart::summary() const
{
    if (!result_ || generation_ < 0) return QStringLiteral("No run shown.");
    const int last = result_->history.back().generation;
    QString s = QStringLiteral("Generation %1 of %2: ").arg(generation_).arg(last);
    if (populationRecorded()) {
        const int children = mutationShown_ + crossoverShown_;
        const int kept = static_cast<int>(population_.size()) - (generation_ == 0 || children == 0 ? static_cast<int>(population_.size()) : children);
        if (children > 0)
            s += QStringLiteral("population %1 = %2 parents kept + %3 mutation + %4 crossover children")
                     .arg(population_.size())
                     .arg(kept)
                     .arg(mutationShown_)
                     .arg(crossoverShown_);
        else
            s += QStringLiteral("population of %1 random subnets").arg(population_.size());
    } else {
        s += QStringLiteral("%1 subnets evaluated (this stored run did not record origins or populations)").arg(population_.size());
    }
    if (best_ >= 0) s += QStringLiteral(" · best so far %1 %").arg(result_->evaluated[static_cast<std::size_t>(best_)].accuracy, 0, 'f', 3);
    return s;
}

QString ParetoChart::pointText(std::size_t index) const
{
    if (!result_ || index >= result_->evaluated.size()) return QString();
    const SearchCandidate& c = result_->evaluated[index];
    QString t = QStringLiteral("<b>generation %1</b>, %2<br>predicted top-1 <b>%3 %</b><br>MACs %4 M · peak SRAM %5 KB · params %6 · flash %7 KB")
                    .arg(c.generation)
                    .arg(originWords(c.origin))
                    .arg(c.accuracy, 0, 'f', 3)
                    .arg(c.cost.millionMacs(), 0, 'f', 2)
                    .arg(c.cost.peakKB(), 0, 'f', 1)
                    .arg(QString::fromStdString(groupThousands(c.cost.params)))
                    .arg(c.cost.flashKB(), 0, 'f', 1);
    if (c.hasConfig() && space_.numStages() > 0)
        t += QStringLiteral("<br>%1<br><i>Click to load it into the Design-space panel.</i>").arg(configInWords(c.config, space_).toHtmlEscaped());
    else
        t += QStringLiteral("<br><i>The stored run kept no config for this point (only the front's).</i>");
    return t;
}

QScatterSeries* ParetoChart::addScatter(const QString& name, const QColor& fill, const QColor& border, int shape, double size,
                                        const std::vector<std::size_t>& candidates)
{
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setMarkerShape(static_cast<QScatterSeries::MarkerShape>(shape));
    s->setMarkerSize(size);
    s->setColor(fill);
    s->setBorderColor(border);
    const int xi = std::max(0, axis_->currentIndex());
    QList<QPointF> pts;
    pts.reserve(static_cast<qsizetype>(candidates.size()));
    for (std::size_t i : candidates) {
        const SearchCandidate& c = result_->evaluated[i];
        pts.append(QPointF(kAxes[xi].shown(c.cost), c.accuracy));
    }
    s->append(pts);
    addSeriesOn(view_->chart(), s, {x_, y_});
    hits_.emplace_back(s, candidates);
    const std::size_t slot = hits_.size() - 1;
    auto nearest = [this, s, slot](const QPointF& p) -> std::size_t {
        const QList<QPointF> all = s->points();
        qsizetype best = 0;
        double bestD = 1e300;
        for (qsizetype k = 0; k < all.size(); ++k) {
            const double d = std::abs(all[k].x() - p.x()) + std::abs(all[k].y() - p.y()) * 1e-3;
            if (d < bestD) bestD = d, best = k;
        }
        return hits_[slot].second[static_cast<std::size_t>(best)];
    };
    connect(s, &QScatterSeries::hovered, this, [this, nearest](const QPointF& p, bool on) {
        if (on) QToolTip::showText(QCursor::pos(), pointText(nearest(p)), view_);
        else QToolTip::hideText();
    });
    connect(s, &QScatterSeries::clicked, this, [this, nearest](const QPointF& p) { Q_EMIT candidateClicked(nearest(p)); });
    return s;
}

namespace {

// The points plotted: an even spread over large runs, plus the front.
std::vector<std::size_t> plottedPoints(const SearchResult& r, std::size_t maxPoints)
{
    std::vector<std::size_t> plotted;
    const auto& all = r.evaluated;
    const std::size_t n = SearchRunRecord::kSamplePoints;   // as many as a stored run keeps
    const std::size_t step = all.size() > maxPoints ? (all.size() + n - 1) / n : 1;
    for (std::size_t i = 0; i < all.size(); i += step) plotted.push_back(i);
    for (std::size_t i : r.paretoFront()) plotted.push_back(i);
    return plotted;
}

// The extent of the plotted points: x (the axis' cost), y (accuracy), c (the colouring cost).
struct PlotRange {
    double xlo = 1e300, xhi = -1e300, ylo = 1e300, yhi = -1e300, clo = 1e300, chi = -1e300;
};
PlotRange rangeOf(const SearchResult& r, const std::vector<std::size_t>& plotted, const Axis& x, const Axis& colour)
{
    PlotRange g;
    for (std::size_t i : plotted) {
        const SearchCandidate& p = r.evaluated[i];
        g.xlo = std::min(g.xlo, x.shown(p.cost));
        g.xhi = std::max(g.xhi, x.shown(p.cost));
        g.ylo = std::min(g.ylo, p.accuracy);
        g.yhi = std::max(g.yhi, p.accuracy);
        g.clo = std::min(g.clo, colour.shown(p.cost));
        g.chi = std::max(g.chi, colour.shown(p.cost));
    }
    return g;
}

}  // namespace

void ParetoChart::redraw()
{
    const int xi = std::max(0, axis_->currentIndex());
    const int ci = xi == 1 ? 0 : 1;   // colour by peak SRAM, or by MACs when SRAM is on the x axis
    QChart* c = view_->chart();
    c->removeAllSeries();
    hits_.clear();
    population_.clear();
    mutationShown_ = crossoverShown_ = 0;
    best_ = -1;
    x_->setTitleText(QString::fromLatin1(kAxes[xi].title));

    const bool playback = result_ && generation_ >= 0 && !result_->history.empty();
    const int last = playback ? result_->history.back().generation : 0;
    const std::vector<std::size_t> plotted = result_ ? plottedPoints(*result_, kMaxPoints) : std::vector<std::size_t>{};
    points_ = static_cast<int>(plotted.size());
    // Axis ranges of the whole run: they stay put while the run plays back.
    PlotRange range = result_ ? rangeOf(*result_, plotted, kAxes[xi], kAxes[ci]) : PlotRange{};
    // Up to the generation shown.
    std::vector<std::size_t> upTo;
    for (std::size_t i : plotted)
        if (!playback || result_->evaluated[i].generation <= generation_) upTo.push_back(i);
    const bool partial = playback && generation_ < last;
    if (!upTo.empty()) {
        drawBands(upTo, ci, range.clo, range.chi, playback);
        drawFront(upTo, xi, partial);
    }
    if (const double limit = drawLimit(xi, range.ylo, range.yhi); !std::isnan(limit)) range.xhi = std::max(range.xhi, limit);
    if (playback) drawPopulation(plotted);
    drawWinner(partial, playback);
    if (range.xlo <= range.xhi) {
        const double pad = (range.xhi - range.xlo) * 0.04 + 1e-9;
        setNiceRange(x_, std::max(0.0, range.xlo - pad), range.xhi + pad);   // round ticks (ChartStyle's niceScale)
        setNiceRange(y_, range.ylo - 0.2, range.yhi + 0.2);
    }
    legend_->refresh();
}

void ParetoChart::drawBands(const std::vector<std::size_t>& upTo, int ci, double clo, double chi, bool faded)
{
    // Colour = the other cost, in five bands (viridis); faded under a generation's population.
    static const QColor band[5] = {paletteColor("pareto.band0"), paletteColor("pareto.band1"), paletteColor("pareto.band2"),
                                   paletteColor("pareto.band3"), paletteColor("pareto.band4")};
    const double width = chi > clo ? (chi - clo) / 5 : 1;
    std::vector<std::vector<std::size_t>> lists(5);
    for (std::size_t i : upTo) {
        const int b = std::clamp(static_cast<int>((kAxes[ci].shown(result_->evaluated[i].cost) - clo) / width), 0, 4);
        lists[static_cast<std::size_t>(b)].push_back(i);
    }
    const QString unit = ci == 1 ? QStringLiteral("KB SRAM") : QStringLiteral("M MACs");
    for (int b = 0; b < 5; ++b) {
        if (lists[static_cast<std::size_t>(b)].empty()) continue;
        QColor col = band[b];
        if (faded) col.setAlpha(110);
        addScatter(QStringLiteral("%1–%2 %3").arg(clo + b * width, 0, 'f', 0).arg(clo + (b + 1) * width, 0, 'f', 0).arg(unit), col,
                   Qt::transparent, QScatterSeries::MarkerShapeCircle, 5, lists[static_cast<std::size_t>(b)]);
    }
}

void ParetoChart::drawFront(const std::vector<std::size_t>& upTo, int xi, bool partial)
{
    // The front for this axis up to the generation: most accurate at each cost, swept by ascending cost.
    std::vector<std::size_t> sorted = upTo;
    auto xOf = [&](std::size_t i) { return kAxes[xi].shown(result_->evaluated[i].cost); };
    std::sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) {
        return xOf(a) < xOf(b) || (xOf(a) == xOf(b) && result_->evaluated[a].accuracy > result_->evaluated[b].accuracy);
    });
    auto* front = new QLineSeries;
    front->setName(partial ? QStringLiteral("Pareto front so far") : QStringLiteral("Pareto front"));
    QPen fp(paletteColor("chart.front"));
    fp.setWidth(2);
    front->setPen(fp);
    double bestAcc = -1e300;
    for (std::size_t i : sorted)
        if (result_->evaluated[i].accuracy > bestAcc) {
            if (front->count() > 0) front->append(xOf(i), bestAcc);   // step
            front->append(xOf(i), result_->evaluated[i].accuracy);
            bestAcc = result_->evaluated[i].accuracy;
        }
    addSeriesOn(view_->chart(), front, {x_, y_});
}

double ParetoChart::drawLimit(int xi, double ylo, double yhi)
{
    // The limit on the plotted cost.
    const Limit* l = result_ ? result_->constraints.find(kAxes[xi].limitKey) : nullptr;
    if (!l) return std::numeric_limits<double>::quiet_NaN();
    const double lim = l->max * kAxes[xi].limitScale;
    auto* line = new QLineSeries;
    line->setName(QStringLiteral("limit %1").arg(QString::fromStdString(formatQuantity(lim))));
    QPen lp(paletteColor("search.error"));
    lp.setStyle(Qt::DashLine);
    lp.setWidth(2);
    line->setPen(lp);
    line->append(lim, ylo - 1);
    line->append(lim, yhi + 1);
    addSeriesOn(view_->chart(), line, {x_, y_});
    return lim;
}

void ParetoChart::drawPopulation(const std::vector<std::size_t>& plotted)
{
    // The generation's population (or, unrecorded, the points evaluated in it).
    const std::size_t g = static_cast<std::size_t>(generation_);
    std::vector<std::size_t> kept, mutation, crossover, drawn;
    if (populationRecorded() && g < result_->populations.size()) {
        population_ = result_->populations[g];
    } else {
        // Each point once (a stored run holds its front twice: with configs, and in the sample).
        std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, double>> seen;
        for (std::size_t i : plotted) {
            const SearchCandidate& p = result_->evaluated[i];
            if (p.generation == generation_ && seen.insert({p.cost.macs, p.cost.peak_activation_bytes, p.cost.params, p.accuracy}).second)
                population_.push_back(i);
        }
    }
    for (std::size_t i : population_) {
        const SearchCandidate& p = result_->evaluated[i];
        if (p.generation < generation_) kept.push_back(i);
        else if (p.origin == CandidateOrigin::mutation) mutation.push_back(i);
        else if (p.origin == CandidateOrigin::crossover) crossover.push_back(i);
        else drawn.push_back(i);
    }
    mutationShown_ = static_cast<int>(mutation.size());
    crossoverShown_ = static_cast<int>(crossover.size());
    if (!kept.empty())
        addScatter(QStringLiteral("○ parents kept"), Qt::transparent, paletteColor("chart.front"), QScatterSeries::MarkerShapeCircle, 10,
                   kept);
    if (!drawn.empty()) {
        const CandidateOrigin o = result_->evaluated[drawn.front()].origin;
        addScatter(o == CandidateOrigin::initial  ? QStringLiteral("● initial population")
                   : o == CandidateOrigin::random ? QStringLiteral("● random draws")
                                                  : QStringLiteral("● evaluated in generation %1").arg(generation_),
                   paletteColor("search.initial"), Qt::white, QScatterSeries::MarkerShapeCircle, 9, drawn);
    }
    if (!mutation.empty())
        addScatter(QStringLiteral("▲ mutation children"), paletteColor("search.mutation"), Qt::white, QScatterSeries::MarkerShapeTriangle,
                   11, mutation);
    if (!crossover.empty())
        addScatter(QStringLiteral("◆ crossover children"), paletteColor("search.crossover"), Qt::white,
                   QScatterSeries::MarkerShapeRotatedRectangle, 11, crossover);
    // The best so far: the earliest most accurate subnet evaluated up to g (the search's own rule).
    for (std::size_t i = 0; i < result_->evaluated.size(); ++i) {
        const SearchCandidate& p = result_->evaluated[i];
        if (p.generation <= generation_ && (best_ < 0 || p.accuracy > result_->evaluated[static_cast<std::size_t>(best_)].accuracy))
            best_ = static_cast<long long>(i);
    }
}

void ParetoChart::drawWinner(bool partial, bool playback)
{
    if (partial && best_ >= 0) {
        addScatter(QStringLiteral("★ best so far"), paletteColor("highlight"), Qt::black, QScatterSeries::MarkerShapeStar, 18,
                   {static_cast<std::size_t>(best_)});
    } else if (result_ && result_->found) {
        // The winner: result->best (found among `evaluated` for hover and click, when it is there).
        std::size_t w = result_->evaluated.size();
        for (std::size_t i = 0; i < result_->evaluated.size() && w == result_->evaluated.size(); ++i)
            if (result_->evaluated[i].accuracy == result_->best.accuracy && result_->evaluated[i].cost.macs == result_->best.cost.macs) w = i;
        if (w < result_->evaluated.size()) {
            addScatter(QStringLiteral("winner"), paletteColor("highlight"), Qt::black, QScatterSeries::MarkerShapeRectangle, 13, {w});
            if (playback) best_ = static_cast<long long>(w);
        }
    }
}

}  // namespace tinyscope::ui
