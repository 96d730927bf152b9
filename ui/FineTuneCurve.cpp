#include "FineTuneCurve.h"

#include "ChartStyle.h"
#include "Palette.h"

#include <QCursor>
#include <QToolTip>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

FineTuneCurve::FineTuneCurve(QWidget* parent) : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    QChart* c = styledChart();
    x_ = addValueAxis(c, Qt::AlignBottom, QStringLiteral("epoch"), QStringLiteral("%d"));
    yTop1_ = addValueAxis(c, Qt::AlignLeft, QStringLiteral("top-1 (%)"), QStringLiteral("%.1f"));
    yLoss_ = addValueAxis(c, Qt::AlignRight, QStringLiteral("training loss"), QStringLiteral("%.2f"));
    top1_ = new QLineSeries;
    top1_->setName(QStringLiteral("top-1 on the test split"));
    loss_ = new QLineSeries;
    loss_->setName(QStringLiteral("training loss"));
    for (QLineSeries* s : {top1_, loss_}) {
        s->setPointsVisible(true);
        addSeriesOn(c, s, {x_, s == top1_ ? yTop1_ : yLoss_});
        connect(s, &QLineSeries::hovered, this, [this, s](const QPointF& p, bool on) { hover(p, on, s == loss_); });
    }
    setChart(c);
    setMinimumSize(200, 120);   // the chart's own hint (title, legend) would widen the tab
    redraw();
}

void FineTuneCurve::start(const QString& title, int epochs, bool keep)
{
    if (!keep) epochs_.clear();
    title_ = title;
    span_ = std::max(1, epochs);
    stale_ = false;
    staleWhy_.clear();
    redraw();
}

void FineTuneCurve::addEpoch(const FineTuneEpoch& e)
{
    auto same = std::find_if(epochs_.begin(), epochs_.end(), [&](const FineTuneEpoch& x) { return x.epoch == e.epoch; });
    if (same != epochs_.end()) *same = e;
    else epochs_.push_back(e);
    std::sort(epochs_.begin(), epochs_.end(), [](const FineTuneEpoch& a, const FineTuneEpoch& b) { return a.epoch < b.epoch; });
    redraw();
}

void FineTuneCurve::showEpochs(const std::vector<FineTuneEpoch>& all)
{
    epochs_ = all;
    redraw();
}

void FineTuneCurve::clear()
{
    epochs_.clear();
    title_.clear();
    stale_ = false;
    redraw();
}

void FineTuneCurve::setStale(bool stale, const QString& why)
{
    if (stale == stale_ && why == staleWhy_) return;
    stale_ = stale;
    staleWhy_ = why;
    redraw();
}

int FineTuneCurve::points() const { return static_cast<int>(top1_->count()); }

QString FineTuneCurve::titleText() const { return chart()->title(); }

void FineTuneCurve::redraw()
{
    QList<QPointF> acc, loss;
    double lo = 100, hi = 0, lossHi = 0;
    for (const FineTuneEpoch& e : epochs_) {
        acc.append(QPointF(e.epoch, e.top1));
        loss.append(QPointF(e.epoch, e.loss));
        lo = std::min(lo, e.top1);
        hi = std::max(hi, e.top1);
        lossHi = std::max(lossHi, e.loss);
    }
    top1_->replace(acc);
    loss_->replace(loss);
    // Stale: the run's colours give way to the faint text colour, so it does not pass for current.
    QPen accPen(paletteColor(stale_ ? "text.faint" : "chart.series"));
    accPen.setWidth(2);
    QPen lossPen(paletteColor(stale_ ? "text.faint" : "memory.weights"));
    lossPen.setWidth(2);
    lossPen.setStyle(Qt::DashLine);
    top1_->setPen(accPen);
    loss_->setPen(lossPen);
    const int last = std::max(span_, epochs_.empty() ? 1 : epochs_.back().epoch);
    x_->setRange(0, last);   // epoch 0: before any step
    x_->setTickCount(last <= 10 ? last + 1 : 6);
    const double pad = std::max(1.0, (hi - lo) * 0.1);
    yTop1_->setRange(epochs_.empty() ? 0 : std::max(0.0, lo - pad), epochs_.empty() ? 100 : std::min(100.0, hi + pad));
    yLoss_->setRange(0, lossHi > 0 ? lossHi * 1.15 : 1);
    QString t = title_.isEmpty() ? QStringLiteral("Fine-tune the current scheme to see its accuracy per epoch") : title_;
    if (stale_) t = QStringLiteral("Stale — %1: %2").arg(staleWhy_.isEmpty() ? QStringLiteral("the scheme changed") : staleWhy_, t);
    chart()->setTitle(t);
}

void FineTuneCurve::hover(const QPointF& p, bool on, bool isLoss)
{
    if (!on) {
        QToolTip::hideText();
        return;
    }
    const int epoch = static_cast<int>(std::lround(p.x()));
    for (const FineTuneEpoch& e : epochs_)
        if (e.epoch == epoch) {
            const QString top1 = QStringLiteral("top-1 %1 %").arg(e.top1, 0, 'f', 2);
            const QString loss = QStringLiteral("loss %1").arg(e.loss, 0, 'f', 4);
            QToolTip::showText(QCursor::pos(),
                               QStringLiteral("epoch %1: %2, %3 (lr %4, %5 s)")
                                   .arg(e.epoch)
                                   .arg(isLoss ? loss : top1, isLoss ? top1 : loss)
                                   .arg(e.lr, 0, 'g', 3)
                                   .arg(e.seconds, 0, 'f', 1),
                               this);
            return;
        }
}

}  // namespace tinyscope::ui
