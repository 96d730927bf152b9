#include "TrainingMemoryChart.h"

#include "ChartStyle.h"
#include "Palette.h"
#include "io/Text.h"

#include <QtCharts/QBarSet>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace tinyscope::ui {

namespace {

// The tallest stacked bar and the running total's left end (inference peak + all extra), KB.
std::pair<double, double> extentsKB(const MemoryLedger& m)
{
    double bar = 0, total = static_cast<double>(m.inference_peak_bytes);
    for (const LedgerRow& r : m.rows) {
        bar = std::max(bar, r.totalBytes() / 1024.0);
        total += r.totalBytes();
    }
    return {bar, total / 1024.0};
}

}  // namespace

TrainingMemoryChart::TrainingMemoryChart(QWidget* parent) : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(200);
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignTop);
    c->setMargins(QMargins(2, 2, 2, 2));
    setChart(c);

    const char* names[] = {"masks", "biases", "saved inputs", "weights"};
    const QColor colours[] = {paletteColor("memory.masks"), paletteColor("memory.biases"), paletteColor("memory.saved-inputs"), paletteColor("memory.weights")};
    bars_ = new QStackedBarSeries;
    for (int i = 0; i < 4; ++i) {
        sets_[i] = new QBarSet(QString::fromUtf8(names[i]));
        sets_[i]->setColor(colours[i]);
        sets_[i]->setBorderColor(colours[i].darker(115));
        bars_->append(sets_[i]);
    }
    bars_->setBarWidth(0.85);
    c->addSeries(bars_);

    total_ = new QLineSeries;
    total_->setName(QStringLiteral("inference peak + extra from here on (right axis, KB in all)"));
    QPen tp(paletteColor("memory.total"));
    tp.setWidthF(2);
    total_->setPen(tp);
    c->addSeries(total_);
    budget_ = new QLineSeries;
    QPen bp(paletteColor("highlight"));
    bp.setStyle(Qt::DashLine);
    bp.setWidthF(2);
    budget_->setPen(bp);
    c->addSeries(budget_);

    // A value axis (bars sit at x = conv index): ticks every 5 convs stay readable for 60 convs.
    x_ = new QValueAxis;
    x_->setLabelFormat(QStringLiteral("%d"));
    x_->setTickType(QValueAxis::TicksDynamic);
    x_->setTickAnchor(0);
    x_->setTickInterval(5);
    x_->setMinorTickCount(4);
    x_->setGridLineVisible(false);
    x_->setTitleText(QStringLiteral("conv index"));
    y_ = new QValueAxis;
    y_->setTitleText(QStringLiteral("KB / conv"));   // short: a longer vertical title is cut to "…" on a low chart
    y2_ = new QValueAxis;
    y2_->setTitleText(QStringLiteral("KB in all"));
    y2_->setLinePenColor(paletteColor("memory.total"));
    y2_->setLabelsColor(paletteColor("memory.total"));   // the lines' axis in the total line's colour
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    c->addAxis(y2_, Qt::AlignRight);
    bars_->attachAxis(x_);
    bars_->attachAxis(y_);
    total_->attachAxis(x_);
    total_->attachAxis(y2_);
    budget_->attachAxis(x_);
    budget_->attachAxis(y2_);
    setBudget(budgetKB_);
    // Value on hover (issue 22): a bar's conv with the exact bytes of each part; the line's total.
    showValueOnHover(bars_, [this](int index, QBarSet*) { return barText(index); });
    connect(total_, &QLineSeries::hovered, this, [this](const QPointF& p, bool on) {
        showHoverText(on ? totalText(static_cast<int>(std::lround(p.x()))) : QString());
    });
}

QString TrainingMemoryChart::barText(int index) const
{
    if (index < 0 || index >= static_cast<int>(rows_.size())) return QString();
    const LedgerRow& r = rows_[static_cast<std::size_t>(index)];
    auto b = [](std::int64_t v) { return QString::fromStdString(groupThousands(v)); };
    return QStringLiteral("conv %1 %2 (%3): masks %4 bits, biases %5 B, saved inputs %6 B, weights %7 B — %8 B in all")
        .arg(r.index)
        .arg(QString::fromStdString(r.name), QString::fromStdString(r.role), b(r.mask_bits), b(r.bias_bytes),
             b(r.saved_input_bytes + r.classifier_input_bytes), b(r.weight_bytes))
        .arg(QString::number(r.totalBytes(), 'f', r.mask_bits % 8 ? 3 : 0));
}

QString TrainingMemoryChart::totalText(int index) const
{
    if (index < 0 || index >= static_cast<int>(rows_.size()) || index >= total_->count()) return QString();
    return QStringLiteral("inference peak + extra of conv %1 and every later one: %2 KB (budget %3 KB)")
        .arg(rows_[static_cast<std::size_t>(index)].index)
        .arg(total_->at(index).y(), 0, 'f', 1)
        .arg(budgetKB_, 0, 'f', 0);
}

void TrainingMemoryChart::setLedger(const MemoryLedger& m, double budgetKB)
{
    const int n = static_cast<int>(m.rows.size());
    rows_ = m.rows;
    if (n != categories_) {
        categories_ = n;
        x_->setRange(-0.5, n - 0.5);
    }
    // One list per set, replaced whole: a handful of signals instead of one per bar.
    QList<qreal> v[4];
    QList<QPointF> running;
    running.reserve(n);
    double acc = static_cast<double>(m.inference_peak_bytes);
    maxBarKB_ = extentsKB(m).first;
    for (int i = n - 1; i >= 0; --i) {
        const LedgerRow& r = m.rows[static_cast<std::size_t>(i)];
        acc += r.totalBytes();
        running.prepend(QPointF(i, acc / 1024.0));
    }
    for (int i = 0; i < n; ++i) {
        const LedgerRow& r = m.rows[static_cast<std::size_t>(i)];
        const double masks = static_cast<double>(r.mask_bits) / 8.0 / 1024.0;
        v[0] << masks;
        v[1] << static_cast<double>(r.bias_bytes) / 1024.0;
        v[2] << static_cast<double>(r.saved_input_bytes + r.classifier_input_bytes) / 1024.0;
        v[3] << static_cast<double>(r.weight_bytes) / 1024.0;
    }
    for (int s = 0; s < 4; ++s) {
        if (sets_[s]->count() == n) {
            for (int i = 0; i < n; ++i)
                if (sets_[s]->at(i) != v[s][i]) sets_[s]->replace(i, v[s][i]);
        } else {
            sets_[s]->remove(0, sets_[s]->count());
            sets_[s]->append(v[s]);
        }
    }
    total_->replace(running);
    maxTotalKB_ = running.isEmpty() ? 0 : running.first().y();
    budget_->setVisible(true);
    setBudget(budgetKB);
}

void TrainingMemoryChart::clearLedger()
{
    for (QBarSet* s : sets_) s->remove(0, s->count());
    rows_.clear();
    total_->clear();
    categories_ = 0;
    x_->setRange(-0.5, 0.5);
    maxBarKB_ = maxTotalKB_ = 0;
    budget_->setVisible(false);
    setBudget(budgetKB_);
}

void TrainingMemoryChart::setBudget(double budgetKB)
{
    budgetKB_ = budgetKB;
    // The budget limits the total (inference + extra), so it is drawn on the total's axis: say so.
    budget_->setName(QStringLiteral("SRAM budget %1 KB (right axis, KB in all)").arg(budgetKB, 0, 'f', 0));
    const double right = std::max(categories_ - 0.5, 0.5);
    budget_->replace(QList<QPointF>{QPointF(-0.5, budgetKB), QPointF(right, budgetKB)});
    rescale();
}

void TrainingMemoryChart::setReferenceLedger(const MemoryLedger& full)
{
    std::tie(refBarKB_, refTotalKB_) = extentsKB(full);
}

void TrainingMemoryChart::setFixedAxes(bool fixed)
{
    fixedAxes_ = fixed;
    rescale();
}

double TrainingMemoryChart::leftAxisMaxKB() const { return y_->max(); }
double TrainingMemoryChart::rightAxisMaxKB() const { return y2_->max(); }

void TrainingMemoryChart::rescale()
{
    const bool fixed = fixedAxes_ && categories_ > 0;
    setNiceRange(y_, 0, std::max(1.0, std::max(maxBarKB_, fixed ? refBarKB_ : 0.0) * 1.15));
    setNiceRange(y2_, 0, std::max({budgetKB_, maxTotalKB_, fixed ? refTotalKB_ : 0.0, 1.0}) * 1.1);
    // Fixed axes make a small scheme's bars a sliver: the title says so and how to see them.
    const double share = y_->max() > 0 ? maxBarKB_ / y_->max() : 1;
    chart()->setTitle(categories_ == 0       ? QStringLiteral("no memory ledger for this model")
                      : fixed && share < 0.1 ? QStringLiteral("Fixed axes: the tallest bar is %1 % of the axis")
                                                   .arg(share * 100, 0, 'f', share < 0.01 ? 1 : 0)
                                             : QString());
}

QString TrainingMemoryChart::titleText() const { return chart()->title(); }

QString TrainingMemoryChart::fixedAxesToolTip()
{
    return QStringLiteral("Scale both axes to this model's full update (every bias and all weights), so switching schemes shows "
                          "how much memory changes. A small scheme's bars are then a sliver (the chart's title says how much of the "
                          "axis they reach), so it is off by default: the axes fit the current scheme.");
}

QList<qreal> TrainingMemoryChart::values(int set) const
{
    QList<qreal> out;
    for (int i = 0; i < sets_[set]->count(); ++i) out << sets_[set]->at(i);
    return out;
}

QList<qreal> TrainingMemoryChart::runningTotalKB() const
{
    QList<qreal> out;
    for (const QPointF& p : total_->points()) out << p.y();
    return out;
}

}  // namespace tinyscope::ui
