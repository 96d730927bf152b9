#include "SubnetCompareView.h"

#include "ChartStyle.h"
#include "Palette.h"

#include "predict/AccuracyOracle.h"
#include "space/ArchSampler.h"
#include "space/DesignSpace.h"
#include "io/Text.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <cmath>

namespace tinyscope::ui {

namespace {

QString costText(const ComparedCost& c, std::int64_t v)
{
    if (c.key == "macs") return QStringLiteral("%1 M").arg(static_cast<double>(v) / 1e6, 0, 'f', 2);
    if (c.key == "params") return QStringLiteral("%1 K").arg(static_cast<double>(v) / 1e3, 0, 'f', 1);
    return QStringLiteral("%1 KB").arg(static_cast<double>(v) / 1024.0, 0, 'f', 1);
}

QString signedText(const QString& text, bool negative) { return (negative ? QStringLiteral("−") : QStringLiteral("+")) + text; }

std::string measureKey(const std::string& space, const SubnetConfig& c) { return space + "|" + c.toJson().dump(); }

}  // namespace

SubnetCompareView::SubnetCompareView(QWidget* parent)
    : QWidget(parent), caption_(new QLabel), table_(new QTableWidget(kRows, 3)), chart_(new QChartView)
{
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    caption_->setWordWrap(true);
    caption_->setTextFormat(Qt::RichText);
    v->addWidget(caption_);
    table_->setHorizontalHeaderLabels({QStringLiteral("A (pinned)"), QStringLiteral("B (current)"), QStringLiteral("B − A")});
    table_->setVerticalHeaderLabels({QStringLiteral("MACs"), QStringLiteral("peak SRAM"), QStringLiteral("params"), QStringLiteral("flash"),
                                     QStringLiteral("predicted top-1"), QStringLiteral("measured top-1")});
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->setToolTip(QStringLiteral("A is the pinned subnet, B the one you are editing; B − A in green where B is better "
                                      "(lower cost, higher accuracy), red where it is worse"));
    table_->setMaximumHeight(table_->verticalHeader()->length() + table_->horizontalHeader()->height() + 6);
    v->addWidget(table_);
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumHeight(210);   // title, four bars and the axis: whole in presentation mode (issue 47)
    chart_->setToolTip(QStringLiteral("B relative to A per cost (1× = the same); the axis stays fixed while A is pinned"));
    v->addWidget(chart_, 1);
    redraw();
}

SubnetCompareView::~SubnetCompareView() = default;

void SubnetCompareView::pin(const DesignSpace& space, const SubnetConfig& a)
{
    space_ = std::make_unique<DesignSpace>(space);
    a_ = a;
    const CostModel model(*space_);
    costA_ = model.summary(a);
    const ArchSampler sampler(*space_);
    axisMax_ = largestRatio(costA_, model.summary(sampler.fullMaxConfig(space_->resolutions.back())));
    showB(space, a);
}

void SubnetCompareView::unpin()
{
    a_.reset();
    space_.reset();
    costs_.clear();
    redraw();
}

void SubnetCompareView::showB(const DesignSpace& space, const SubnetConfig& b)
{
    if (!a_ || space.name != space_->name) return;
    b_ = b;
    costB_ = CostModel(*space_).summary(b);
    costs_ = compareCosts(costA_, costB_);
    redraw();
}

void SubnetCompareView::setOracle(std::shared_ptr<AccuracyOracle> oracle)
{
    oracle_ = std::move(oracle);
    redraw();
}

void SubnetCompareView::recordMeasured(const std::string& space, const SubnetConfig& c, double top1)
{
    measured_[measureKey(space, c)] = top1;
    redraw();
}

std::optional<double> SubnetCompareView::predicted(const SubnetConfig& c) const
{
    if (!oracle_) return std::nullopt;
    try {
        return oracle_->predict({c}).at(0);
    } catch (const std::exception&) {
        return std::nullopt;   // a predictor of another space
    }
}

std::optional<double> SubnetCompareView::measured(const SubnetConfig& c) const
{
    if (!space_) return std::nullopt;
    auto it = measured_.find(measureKey(space_->name, c));
    return it == measured_.end() ? std::nullopt : std::optional<double>(it->second);
}

QString SubnetCompareView::cellText(int row, int column) const
{
    const QTableWidgetItem* item = table_->item(row, column);
    return item ? item->text() : QString();
}

void SubnetCompareView::redraw()
{
    table_->clearContents();
    if (!a_) {
        caption_->setText(QStringLiteral("Press <b>Pin A</b> to keep the current subnet as A, then edit B: every cost and the "
                                         "accuracy with its difference, and both block diagrams side by side."));
        replaceChart(chart_, styledChart(QStringLiteral("B / A")));
        return;
    }
    caption_->setText(QStringLiteral("<b>A</b>: %1 px, width %2 · <b>B</b>: %3 px, width %4 (the subnet you edit)")
                          .arg(a_->image_size)
                          .arg(space_->width_mult_list[static_cast<std::size_t>(a_->wid)])
                          .arg(b_.image_size)
                          .arg(space_->width_mult_list[static_cast<std::size_t>(b_.wid)]));
    const QColor better = paletteColor("status.pass"), worse = paletteColor("status.over");
    auto set = [this](int r, int c, const QString& text, const QColor& colour = QColor()) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (colour.isValid()) item->setForeground(colour);
        table_->setItem(r, c, item);
    };
    for (std::size_t i = 0; i < costs_.size(); ++i) {
        const ComparedCost& c = costs_[i];
        const int r = static_cast<int>(i);
        set(r, 0, costText(c, c.a));
        set(r, 1, costText(c, c.b));
        const std::int64_t d = c.delta();
        QString delta = d == 0 ? QStringLiteral("0") : signedText(costText(c, std::llabs(d)), d < 0);
        if (d != 0 && c.a > 0) delta += QStringLiteral(" (%1×)").arg(c.ratio(), 0, 'f', 2);
        set(r, 2, delta, d == 0 ? QColor() : d < 0 ? better : worse);
        table_->item(r, 0)->setToolTip(QString::fromStdString(groupThousands(c.a)));
        table_->item(r, 1)->setToolTip(QString::fromStdString(groupThousands(c.b)));
        table_->item(r, 2)->setToolTip(QString::fromStdString(groupThousands(d)));
    }
    auto accuracyRow = [&](int r, std::optional<double> a, std::optional<double> b) {
        set(r, 0, a ? QStringLiteral("%1 %").arg(*a, 0, 'f', 2) : QStringLiteral("–"));
        set(r, 1, b ? QStringLiteral("%1 %").arg(*b, 0, 'f', 2) : QStringLiteral("–"));
        if (a && b) {
            const double d = *b - *a;
            set(r, 2, signedText(QStringLiteral("%1 points").arg(std::fabs(d), 0, 'f', 2), d < 0), d > 0 ? better : d < 0 ? worse : QColor());
        }
    };
    accuracyRow(4, predicted(*a_), predicted(b_));
    accuracyRow(5, measured(*a_), measured(b_));

    QChart* chart = styledChart(QStringLiteral("B / A per cost"));
    auto* bars = new QBarSet(QStringLiteral("B / A"));
    bars->setColor(paletteColor("chart.series"));
    QStringList names;
    for (auto it = costs_.rbegin(); it != costs_.rend(); ++it) {
        *bars << it->ratio();
        names << QString::fromStdString(it->label);
    }
    auto* series = new QHorizontalBarSeries;
    series->append(bars);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value×"));
    series->setLabelsPrecision(3);
    chart->addSeries(series);
    chart->legend()->hide();
    auto* y = new QBarCategoryAxis;
    y->append(names);
    auto* x = new QValueAxis;
    setNiceRange(x, 0, axisMax_ * 1.05, 4, false, QStringLiteral("×"));   // 4 ticks: readable beside two diagrams
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    auto* same = new QLineSeries;
    same->setName(QStringLiteral("1× (same as A)"));
    QPen pen(paletteColor("chart.budget"));
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    same->setPen(pen);
    same->append(1.0, -0.5);
    same->append(1.0, static_cast<double>(names.size()) - 0.5);
    addSeriesOn(chart, same, {x, y});
    const std::vector<ComparedCost> costs = costs_;
    showValueOnHover(series, [costs](int index, QBarSet*) {
        if (index >= static_cast<int>(costs.size())) return QString();
        const ComparedCost& c = costs[costs.size() - 1 - static_cast<std::size_t>(index)];
        return QStringLiteral("%1: A %2, B %3 (%4×)")
            .arg(QString::fromStdString(c.label), QString::fromStdString(groupThousands(c.a)), QString::fromStdString(groupThousands(c.b)))
            .arg(c.ratio(), 0, 'f', 3);
    });
    replaceChart(chart_, chart);
    // Whole cost names and an axis title that fits (compare mode in presentation mode at 1280×720, issue 47).
    new CategoryNames(chart, y, names);
    fitAxisTitle(chart, x, {QStringLiteral("B / A (fixed while A is pinned: up to the space's largest subnet)"),
                            QStringLiteral("B / A (fixed axis)"), QStringLiteral("B / A")});
}

}  // namespace tinyscope::ui
