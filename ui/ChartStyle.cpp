#include "ChartStyle.h"

#include "Presentation.h"

#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsSimpleTextItem>
#include <QRegularExpression>
#include <QToolTip>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <memory>

namespace tinyscope::ui {

QChart* styledChart(const QString& title)
{
    auto* c = new QChart;
    c->setTitle(title);
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignTop);
    c->setMargins(QMargins(4, 4, 4, 4));
    return c;
}

void replaceChart(QChartView* view, QChart* chart)
{
    QChart* old = view->chart();
    Presentation::style(chart);
    view->setChart(chart);
    delete old;
}

QValueAxis* addValueAxis(QChart* chart, Qt::Alignment side, const QString& title, const QString& format)
{
    auto* a = new QValueAxis;
    a->setTitleText(title);
    if (!format.isEmpty()) a->setLabelFormat(format);
    chart->addAxis(a, side);
    return a;
}

namespace {

// The least of 1, 2, 5 × 10^k that is at least `raw`.
double niceStepAtLeast(double raw)
{
    if (!(raw > 0) || !std::isfinite(raw)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * p >= raw * (1 - 1e-9)) return m * p;
    return 10 * p;
}

// The next step of the 1-2-5 sequence after `step`.
double nextNiceStep(double step)
{
    const double p = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    const double m = step / p;
    return m < 1.5 ? 2 * p : m < 3.5 ? 5 * p : 10 * p;
}

void applyTicks(QValueAxis* axis, double lo, double hi, double anchor, const NiceScale& s, const QString& suffix)
{
    axis->setRange(lo, hi);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(anchor);
    axis->setTickInterval(s.step);
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(s.decimals) + suffix);
}

}  // namespace

int NiceScale::ticks() const { return static_cast<int>(std::lround((max - min) / step)) + 1; }

NiceScale niceScale(double lo, double hi, int maxTicks, bool integers)
{
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (hi < lo) std::swap(lo, hi);
    if (hi - lo <= 1e-12 * std::max(1.0, std::abs(hi))) {   // one value: a range around it
        const double pad = integers ? 1.0 : lo == 0 ? 1.0 : std::abs(lo) * 0.01;
        lo = lo == 0 ? 0 : lo - pad;
        hi += pad;
    }
    const int intervals = std::max(1, maxTicks - 1);
    NiceScale s;
    s.step = niceStepAtLeast((hi - lo) / intervals);
    if (integers) s.step = std::max(1.0, s.step);
    for (int tries = 0; tries < 8; ++tries) {
        s.min = std::floor(lo / s.step + 1e-9) * s.step;
        s.max = std::ceil(hi / s.step - 1e-9) * s.step;
        if ((s.max - s.min) / s.step <= intervals + 1e-9) break;
        s.step = nextNiceStep(s.step);   // a range that straddles the steps needs one more tick: a larger step
    }
    if (s.max <= s.min) s.max = s.min + s.step;
    if (s.min == 0) s.min = 0;   // not -0
    s.decimals = s.step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(s.step) - 1e-9));
    return s;
}

NiceScale setNiceRange(QValueAxis* axis, double lo, double hi, int maxTicks, bool integers, const QString& suffix)
{
    const NiceScale s = niceScale(lo, hi, maxTicks, integers);
    applyTicks(axis, s.min, s.max, s.min, s, suffix);
    return s;
}

NiceScale setNiceTicks(QValueAxis* axis, double lo, double hi, int maxTicks, bool integers, const QString& suffix)
{
    if (hi < lo) std::swap(lo, hi);
    NiceScale s = niceScale(lo, hi, maxTicks, integers);
    s.min = lo;
    s.max = hi;
    applyTicks(axis, lo, hi, std::ceil(lo / s.step - 1e-9) * s.step, s, suffix);
    return s;
}

QList<double> tickValues(const QValueAxis* axis)
{
    QList<double> out;
    const double lo = axis->min(), hi = axis->max();
    if (axis->tickType() == QValueAxis::TicksDynamic) {
        const double step = axis->tickInterval(), anchor = axis->tickAnchor();
        if (!(step > 0)) return out;
        const double first = anchor + std::ceil((lo - anchor) / step - 1e-9) * step;
        for (int k = 0; k < 1000; ++k) {
            const double v = first + k * step;
            if (v > hi + step * 1e-9) break;
            out << v;
        }
    } else {
        const int n = std::max(2, axis->tickCount());
        for (int i = 0; i < n; ++i) out << lo + (hi - lo) * i / (n - 1);
    }
    return out;
}

QStringList tickLabels(const QValueAxis* axis)
{
    // Qt Charts' rule (ChartAxisElement::formatLabel): a d / i / c conversion gets qint64(value).
    static const QRegularExpression conversion(QStringLiteral("%[\\-\\+#\\s\\d\\.\\'lhjztL]*([dicuoxXfFeEgGaA])"));
    const QString format = axis->labelFormat().isEmpty() ? QStringLiteral("%g") : axis->labelFormat();
    const QRegularExpressionMatch m = conversion.match(format);
    const bool integer = m.hasMatch() && QStringLiteral("dic").contains(m.captured(1));
    const QByteArray f = format.toUtf8();
    QStringList out;
    for (double v : tickValues(axis)) out << (integer ? QString::asprintf(f.constData(), static_cast<int>(v)) : QString::asprintf(f.constData(), v));
    return out;
}

void showHoverText(const QString& text)
{
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(QCursor::pos(), text);
}

void showValueOnHover(QAbstractBarSeries* series, std::function<QString(int index, QBarSet* set)> text)
{
    QObject::connect(series, &QAbstractBarSeries::hovered, series, [text = std::move(text)](bool on, int index, QBarSet* set) {
        showHoverText(on && index >= 0 ? text(index, set) : QString());
    });
}

CategoryNames::CategoryNames(QChart* chart, QBarCategoryAxis* axis, const QStringList& names)
    : QObject(chart), chart_(chart), axis_(axis), base_(chart->margins())
{
    axis->setLabelsVisible(false);
    for (const QString& n : names) {
        auto* item = new QGraphicsSimpleTextItem(n, chart);
        item->setZValue(5);
        items_ << item;
    }
    connect(chart, &QChart::plotAreaChanged, this, &CategoryNames::place);
    connect(axis, &QAbstractAxis::labelsFontChanged, this, &CategoryNames::place);
    connect(axis, &QAbstractAxis::labelsBrushChanged, this, &CategoryNames::place);
    place();
}

QFont CategoryNames::font() const { return items_.isEmpty() ? axis_->labelsFont() : items_.front()->font(); }

void CategoryNames::place()
{
    const QRectF plot = chart_->plotArea();
    const int n = static_cast<int>(items_.size());
    if (placing_ || n == 0 || plot.width() <= 0 || plot.height() <= 0) return;
    placing_ = true;
    const bool vertical = (axis_->alignment() & (Qt::AlignLeft | Qt::AlignRight)) != 0;
    const double spacing = (vertical ? plot.height() : plot.width()) / n;
    QFont f = axis_->labelsFont();
    if (f.pointSizeF() <= 0) f.setPointSizeF(9);
    auto widest = [this](const QFontMetricsF& fm) {
        double w = 0;
        for (const QGraphicsSimpleTextItem* item : items_) w = std::max(w, fm.horizontalAdvance(item->text()));
        return w;
    };
    for (;;) {   // the largest font at most the axis's whose names fit the spacing
        const QFontMetricsF fm(f);
        const double need = vertical ? fm.height() : widest(fm) + 4;
        if (need <= spacing || f.pointSizeF() <= 6) break;
        f.setPointSizeF(std::max(6.0, f.pointSizeF() * 0.92));
    }
    const QFontMetricsF fm(f);
    for (QGraphicsSimpleTextItem* item : items_) {
        item->setFont(f);
        item->setBrush(axis_->labelsBrush());
    }
    QMargins m = base_;
    if (vertical) m.setLeft(base_.left() + static_cast<int>(std::ceil(widest(fm))) + 8);
    else m.setBottom(base_.bottom() + static_cast<int>(std::ceil(fm.height())) + 4);
    if (m != chart_->margins()) chart_->setMargins(m);   // the plot area follows: placed again then
    const QRectF area = chart_->plotArea();
    const double step = (vertical ? area.height() : area.width()) / n;
    for (int i = 0; i < n; ++i) {
        QGraphicsSimpleTextItem* item = items_[i];
        const double w = fm.horizontalAdvance(item->text());
        if (vertical) item->setPos(area.left() - 6 - w, area.bottom() - (i + 0.5) * step - fm.height() / 2);   // the first category at the bottom
        else item->setPos(area.left() + (i + 0.5) * step - w / 2, area.bottom() + 3);
    }
    placing_ = false;
}

void fitAxisTitle(QChart* chart, QAbstractAxis* axis, const QStringList& forms, std::function<void(int form)> chosen)
{
    auto fit = [chart, axis, forms, chosen, last = std::make_shared<int>(-2)] {
        const QRectF plot = chart->plotArea();
        if (plot.width() <= 0 || plot.height() <= 0 || forms.isEmpty()) return;
        const bool vertical = (axis->alignment() & (Qt::AlignLeft | Qt::AlignRight)) != 0;
        const double room = (vertical ? plot.height() : plot.width()) - 8;
        QFontMetricsF fm(axis->titleFont());
        int pick = -1;
        for (int i = 0; i < forms.size() && pick < 0; ++i)
            if (fm.horizontalAdvance(forms[i]) + 2 <= room) pick = i;
        if (pick == *last) return;
        *last = pick;
        if (pick >= 0) axis->setTitleText(forms[pick]);
        axis->setTitleVisible(pick >= 0);
        if (chosen) chosen(pick);
    };
    QObject::connect(chart, &QChart::plotAreaChanged, axis, fit);
    QObject::connect(axis, &QAbstractAxis::titleFontChanged, axis, fit);
    fit();
}

void addSeriesOn(QChart* chart, QAbstractSeries* series, std::initializer_list<QAbstractAxis*> axes)
{
    chart->addSeries(series);
    for (QAbstractAxis* a : axes) series->attachAxis(a);
    Presentation::styleSeries(chart, series);
}

}  // namespace tinyscope::ui
