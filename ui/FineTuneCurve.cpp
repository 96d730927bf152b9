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
    // Short axis titles: a vertical one longer than the plot is high is cut to "…" (1280×720,
    // presentation mode); the legend above says what each line is.
    x_ = addValueAxis(c, Qt::AlignBottom, QStringLiteral("epoch"));
    yTop1_ = addValueAxis(c, Qt::AlignLeft, QStringLiteral("top-1 %"));
    yLoss_ = addValueAxis(c, Qt::AlignRight, QStringLiteral("loss"));
    top1_ = new QLineSeries;
    top1_->setName(QStringLiteral("top-1 on the test split (epoch 0: before training)"));
    loss_ = new QLineSeries;
    loss_->setName(QStringLiteral("training loss per epoch"));
    running_ = new QLineSeries;
    running_->setName(QStringLiteral("training loss so far in the epoch"));
    for (QLineSeries* s : {running_, loss_, top1_}) {
        s->setPointsVisible(s != running_);
        addSeriesOn(c, s, {x_, s == top1_ ? yTop1_ : yLoss_});
        connect(s, &QLineSeries::hovered, this, [this, s](const QPointF& p, bool on) { hover(p, on, s != top1_); });
    }
    setChart(c);
    setMinimumSize(200, 120);   // the chart's own hint (title, legend) would widen the tab
    redraw();
}

void FineTuneCurve::start(const QString& title, int epochs, bool keep)
{
    if (!keep) {
        epochs_.clear();
        initial_ = -1;
        running_->clear();
    }
    title_ = title;
    span_ = std::max(1, epochs);
    stale_ = false;
    staleWhy_.clear();
    redraw();
}

void FineTuneCurve::setInitialTop1(double top1)
{
    initial_ = top1;
    redraw();
}

void FineTuneCurve::addBatches(const std::vector<FineTuneBatch>& batches)
{
    if (batches.empty()) return;
    QList<QPointF> pts = running_->points();
    const double spacing = 1.0 / kBatchPointsPerEpoch;
    for (const FineTuneBatch& b : batches) {
        const QPointF p(b.position(), b.loss);
        // Drop what a resumed or repeated run reports again, then thin: a new point only when the
        // one before the live tip is a spacing behind, else the tip moves.
        while (!pts.isEmpty() && pts.back().x() >= p.x()) pts.removeLast();
        const bool epochStart = b.batch == 1;   // each epoch's running mean starts afresh: its first point stays
        // (A point at x belongs to epoch ⌈x⌉: epoch 1's last step sits at 1.0.)
        const bool sameEpoch = pts.size() >= 2 && std::ceil(pts[pts.size() - 2].x() - 1e-9) == std::ceil(p.x() - 1e-9);
        if (!epochStart && sameEpoch && p.x() - pts[pts.size() - 2].x() < spacing)
            pts.back() = p;
        else
            pts.append(p);
    }
    running_->replace(pts);
    rescaleLoss();
}

QList<QPointF> FineTuneCurve::batchPoints() const { return running_->points(); }

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
    initial_ = -1;
    running_->clear();
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

int FineTuneCurve::points() const { return static_cast<int>(epochs_.size()); }

void FineTuneCurve::rescaleLoss()
{
    double hi = 0;
    for (const FineTuneEpoch& e : epochs_) hi = std::max(hi, e.loss);
    for (const QPointF& p : running_->points()) hi = std::max(hi, p.y());
    if (hi != lossHi_ || yLoss_->tickType() != QValueAxis::TicksDynamic) setNiceRange(yLoss_, 0, hi > 0 ? hi * 1.05 : 1, 6);
    lossHi_ = hi;
}

void FineTuneCurve::redraw()
{
    QList<QPointF> acc, loss;
    double lo = 100, hi = 0;
    if (initial_ >= 0) {
        acc.append(QPointF(0, initial_));   // epoch 0: the model before any step
        lo = hi = initial_;
    }
    for (const FineTuneEpoch& e : epochs_) {
        acc.append(QPointF(e.epoch, e.top1));
        loss.append(QPointF(e.epoch, e.loss));
        lo = std::min(lo, e.top1);
        hi = std::max(hi, e.top1);
    }
    top1_->replace(acc);
    loss_->replace(loss);
    // Stale: the run's colours give way to the faint text colour, so it does not pass for current.
    QPen accPen(paletteColor(stale_ ? "text.faint" : "chart.series"));
    accPen.setWidth(2);
    QPen lossPen(paletteColor(stale_ ? "text.faint" : "memory.weights"));
    lossPen.setWidth(2);
    lossPen.setStyle(Qt::DashLine);
    QPen runningPen(lossPen.color());
    runningPen.setWidth(1);
    top1_->setPen(accPen);
    loss_->setPen(lossPen);
    running_->setPen(runningPen);
    const int last = std::max(span_, epochs_.empty() ? 1 : epochs_.back().epoch);
    setNiceTicks(x_, 0, last, 11, true);   // epoch 0: before any step; integer ticks only
    if (acc.isEmpty()) setNiceRange(yTop1_, 0, 100);
    else {
        const double pad = std::max(1.0, (hi - lo) * 0.1);
        // Five ticks at most: whole points on a narrow chart (Qt Charts cuts wider labels to "1…").
        setNiceRange(yTop1_, std::max(0.0, lo - pad), std::min(100.0, hi + pad), 5);
    }
    lossHi_ = -1;
    rescaleLoss();
    QString t = title_.isEmpty() ? QStringLiteral("Fine-tune the current scheme to see its accuracy per epoch") : title_;
    if (stale_) t = QStringLiteral("Stale — %1: %2").arg(staleWhy_.isEmpty() ? QStringLiteral("the scheme changed") : staleWhy_, t);
    if (t != titleText_) {
        titleText_ = t;
        Q_EMIT titleChanged(t);
    }
}

void FineTuneCurve::hover(const QPointF& p, bool on, bool isLoss)
{
    if (!on) {
        QToolTip::hideText();
        return;
    }
    const int epoch = static_cast<int>(std::lround(p.x()));
    if (std::abs(p.x() - epoch) > 0.02 && isLoss) {   // on the running loss, between epochs
        const QList<QPointF> pts = running_->points();
        if (pts.isEmpty()) return;
        const auto near = std::min_element(pts.begin(), pts.end(), [&](const QPointF& a, const QPointF& b) {
            return std::abs(a.x() - p.x()) < std::abs(b.x() - p.x());
        });
        QToolTip::showText(QCursor::pos(),
                           QStringLiteral("epoch %1, %2 % of its batches: mean training loss so far %3")
                               .arg(static_cast<int>(std::floor(near->x())) + 1)
                               .arg(std::lround((near->x() - std::floor(near->x())) * 100))
                               .arg(near->y(), 0, 'f', 4),
                           this);
        return;
    }
    if (epoch == 0 && initial_ >= 0) {
        QToolTip::showText(QCursor::pos(), QStringLiteral("epoch 0, before any step: top-1 %1 % (the new classifier)").arg(initial_, 0, 'f', 2), this);
        return;
    }
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
