#include "ChartLegend.h"

#include "FlowLayout.h"

#include <QLabel>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>
#include <QtCharts/QLegend>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QLegendMarker>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

namespace {

// The width `label`'s rich text takes on one line.
int oneLineWidth(const QLabel* label)
{
    QTextDocument doc;
    doc.setDefaultFont(label->font());
    doc.setDocumentMargin(0);
    doc.setHtml(label->text());
    const QMargins m = label->contentsMargins();
    return static_cast<int>(std::ceil(doc.idealWidth())) + m.left() + m.right() + 2 * label->margin() + 2;
}

// An entry: one line, or — when wider than the strip — wrapped to the strip's width. Its least
// width is nominal either way, so no entry holds the strip wider than its chart.
class LegendEntry : public QLabel {
public:
    using QLabel::QLabel;
    void setWrapWidth(int width)
    {
        if (width == wrap_) return;
        wrap_ = width;
        setWordWrap(width > 0);
        updateGeometry();
    }
    QSize sizeHint() const override { return wrap_ > 0 ? QSize(wrap_, heightForWidth(wrap_)) : QLabel::sizeHint(); }
    QSize minimumSizeHint() const override
    {
        const QSize s = sizeHint();
        return QSize(std::min(s.width(), 24), s.height());
    }

private:
    int wrap_ = 0;   // 0: one line
};

}  // namespace

ChartLegend::ChartLegend(QChart* chart, QWidget* parent) : QWidget(parent), chart_(chart)
{
    auto* box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    box->setSpacing(2);
    title_ = new QLabel;
    title_->setWordWrap(true);
    title_->setTextFormat(Qt::PlainText);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    title_->setMinimumWidth(1);   // it wraps: its longest word must not set the chart's width either
    title_->hide();
    box->addWidget(title_);
    entries_ = new QWidget;
    flow_ = new FlowLayout(entries_, 10, 2);
    QSizePolicy p(QSizePolicy::Preferred, QSizePolicy::Preferred);
    p.setHeightForWidth(true);
    entries_->setSizePolicy(p);
    box->addWidget(entries_);
    setSizePolicy(p);
    chart->legend()->hide();
    scheduleRefresh();   // the chart makes its markers once its series reach the scene
}

void ChartLegend::showEvent(QShowEvent* e)
{
    QWidget::showEvent(e);
    scheduleRefresh();
}

void ChartLegend::resizeEvent(QResizeEvent* e)
{
    QWidget::resizeEvent(e);
    fitLabels();
}

void ChartLegend::changeEvent(QEvent* e)
{
    QWidget::changeEvent(e);
    if (e->type() == QEvent::FontChange) fitLabels();   // presentation mode: wider text
}

void ChartLegend::setTitle(const QString& title)
{
    title_->setText(title);
    title_->setVisible(!title.isEmpty());
    fitLabels();
}

QString ChartLegend::title() const { return title_->text(); }

void ChartLegend::fitLabels()
{
    const int avail = contentsRect().width();
    if (avail <= 0) return;
    // An entry wraps only when it is wider than the strip (word wrap on every label would break
    // short entries too); a narrower strip wraps it at the next resize.
    for (QLabel* l : labels_) {
        auto* entry = static_cast<LegendEntry*>(l);
        entry->setWrapWidth(oneLineWidth(l) > avail ? avail : 0);
    }
    flow_->invalidate();
    updateGeometry();
}

QStringList ChartLegend::texts() const
{
    QStringList out;
    for (const QLabel* l : labels_) out << l->property("entry").toString();
    return out;
}

void ChartLegend::scheduleRefresh()
{
    if (scheduled_) return;
    scheduled_ = true;
    QTimer::singleShot(0, this, [this] { refresh(); });
}

void ChartLegend::refresh()
{
    scheduled_ = false;
    for (QLabel* l : labels_) delete l;
    labels_.clear();
    if (!chart_) return;
    QLegend* legend = chart_->legend();
    legend->hide();
    for (QLegendMarker* m : legend->markers()) {
        connect(m, &QLegendMarker::labelChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        connect(m, &QLegendMarker::brushChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        connect(m, &QLegendMarker::penChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        connect(m->series(), &QAbstractSeries::visibleChanged, this, &ChartLegend::scheduleRefresh, Qt::UniqueConnection);
        // (The markers' own visibility follows the hidden legend: the series' is the one that counts.)
        if (!m->series()->isVisible() || m->label().isEmpty()) continue;
        const QAbstractSeries::SeriesType t = m->series()->type();
        const bool line = t == QAbstractSeries::SeriesTypeLine || t == QAbstractSeries::SeriesTypeSpline;
        const QColor c = m->brush().style() != Qt::NoBrush ? m->brush().color() : m->pen().color();
        auto* l = new LegendEntry(QStringLiteral("<span style='color:%1'>%2</span>&nbsp;%3")
                                 .arg(c.name(), line ? QStringLiteral("━━") : QStringLiteral("■"), m->label().toHtmlEscaped()));
        l->setTextFormat(Qt::RichText);
        l->setProperty("entry", m->label());
        flow_->addWidget(l);
        labels_ << l;
    }
    fitLabels();
}

QWidget* withWrappingLegend(QWidget* chartView, QChart* chart, ChartLegend** legend)
{
    auto* box = new QWidget;
    auto* l = new QVBoxLayout(box);
    l->setContentsMargins(0, 0, 0, 0);
    l->setSpacing(0);
    auto* strip = new ChartLegend(chart, box);
    strip->setContentsMargins(8, 2, 8, 0);
    l->addWidget(strip);
    l->addWidget(chartView, 1);
    if (legend) *legend = strip;
    return box;
}

}  // namespace tinyscope::ui
