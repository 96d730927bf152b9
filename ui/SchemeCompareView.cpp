#include "SchemeCompareView.h"

#include "ChartStyle.h"
#include "Palette.h"
#include "SchemeAccuracyScatter.h"
#include "TrainingLayerModel.h"

#include "io/Text.h"
#include "UiText.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <map>

namespace tinyscope::ui {

SchemeCompareView::SchemeCompareView(TrainingLayerModel* layers, SchemeAccuracyScatter* runs, QWidget* parent)
    : QWidget(parent), layers_(layers), runs_(runs), caption_(new QLabel), pin_(new QPushButton), table_(new QTableWidget), chart_(new QChartView)
{
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    auto* top = new QHBoxLayout;
    caption_->setWordWrap(true);
    caption_->setTextFormat(Qt::RichText);
    top->addWidget(caption_, 1);
    top->addWidget(pin_, 0, Qt::AlignTop);
    v->addLayout(top);
    pin_->setToolTip(QStringLiteral("Keep the current scheme as A and compare the scheme you edit (B) with it; "
                                    "the chart's axis stays fixed while A is pinned"));
    table_->setColumnCount(3);
    table_->setHorizontalHeaderLabels({QStringLiteral("A (pinned)"), QStringLiteral("B (current)"), QStringLiteral("B − A")});
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->setToolTip(QStringLiteral("Memory of scheme A and B from the ledger (exact bytes in each cell's tooltip); B − A in "
                                      "green where B needs less or is more accurate, red where it needs more or is less accurate"));
    v->addWidget(table_, 1);
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumHeight(180);
    chart_->setToolTip(QStringLiteral("Extra-memory parts and peaks of A and B (KB); hover a bar for its exact bytes"));
    v->addWidget(chart_, 1);
    connect(pin_, &QPushButton::clicked, this, [this] { pinned() ? unpin() : static_cast<void>(pin()); });
    connect(layers_, &TrainingLayerModel::schemeChanged, this, &SchemeCompareView::refresh);
    redraw();
}

bool SchemeCompareView::pin()
{
    if (!layers_->hasNetwork() || !layers_->hasLedger()) return false;
    net_ = layers_->networkPtr();
    a_ = layers_->ledger();
    schemeA_ = layers_->schemeDescription();
    // The axis starts at A's extra memory and only grows while A is pinned (redraw), so a B that
    // needs less shows shorter bars instead of a rescaled chart.
    axisMaxKB_ = static_cast<double>(a_->extra.total()) / 1024.0;
    refresh();
    return true;
}

void SchemeCompareView::unpin()
{
    a_.reset();
    net_.reset();
    rows_.clear();
    redraw();
}

void SchemeCompareView::refresh()
{
    if (!a_) return redraw();
    if (!layers_->hasNetwork() || layers_->networkPtr() != net_ || !layers_->hasLedger()) return unpin();   // another model
    schemeB_ = layers_->schemeDescription();
    rows_ = compareLedgers(*a_, layers_->ledger());
    redraw();
}

std::optional<double> SchemeCompareView::fineTunedTop1(const QString& scheme) const
{
    std::optional<double> top1;   // the latest run of that scheme (QAS on preferred)
    bool qas = false;
    for (const SchemeRun& r : runs_->shownRuns())
        if (r.scheme == scheme && (!top1 || r.qas || !qas)) {
            top1 = r.top1;
            qas = r.qas;
        }
    return top1;
}

QString SchemeCompareView::cellText(int row, int column) const
{
    const QTableWidgetItem* item = table_->item(row, column);
    return item ? item->text() : QString();
}

void SchemeCompareView::redraw()
{
    table_->clearContents();
    if (!a_) {
        table_->setRowCount(0);
        pin_->setText(QStringLiteral("Pin scheme A"));
        caption_->setText(QStringLiteral("Press <b>Pin scheme A</b> to keep the current scheme as A, then change the scheme (B) "
                                         "in the table, the toolbar or the published list: memory and accuracy side by side."));
        replaceChart(chart_, styledChart(QStringLiteral("Memory of A and B")));
        return;
    }
    pin_->setText(QStringLiteral("Unpin A"));
    caption_->setText(QStringLiteral("<b>A</b>: %1<br><b>B</b>: %2").arg(schemeA_.toHtmlEscaped(), schemeB_.toHtmlEscaped()));
    const QColor better = paletteColor("status.pass"), worse = paletteColor("status.over");
    table_->setRowCount(static_cast<int>(rows_.size()) + 1);
    QStringList labels;
    auto set = [this](int r, int c, const QString& text, const QString& tip = QString(), const QColor& colour = QColor()) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(tip);
        if (colour.isValid()) item->setForeground(colour);
        table_->setItem(r, c, item);
    };
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        const ComparedMemory& m = rows_[i];
        const int r = static_cast<int>(i);
        labels << (m.part ? QStringLiteral("   ") : QString()) + QString::fromStdString(m.label);
        set(r, 0, kbText(m.a), QString::fromStdString(groupThousands(m.a)) + QStringLiteral(" bytes"));
        set(r, 1, kbText(m.b), QString::fromStdString(groupThousands(m.b)) + QStringLiteral(" bytes"));
        const std::int64_t d = m.delta();
        set(r, 2, d == 0 ? QStringLiteral("0") : (d < 0 ? QStringLiteral("−") : QStringLiteral("+")) + kbText(std::llabs(d)),
            QString::fromStdString(groupThousands(d)) + QStringLiteral(" bytes"), d == 0 ? QColor() : d < 0 ? better : worse);
    }
    const int acc = static_cast<int>(rows_.size());
    labels << QStringLiteral("top-1 after fine-tuning");
    const std::optional<double> ta = fineTunedTop1(schemeA_), tb = fineTunedTop1(schemeB_);
    const QString notRun = QStringLiteral("– (run it in the Fine-tune tab)");
    set(acc, 0, ta ? QStringLiteral("%1 %").arg(*ta, 0, 'f', 2) : notRun);
    set(acc, 1, tb ? QStringLiteral("%1 %").arg(*tb, 0, 'f', 2) : notRun);
    if (ta && tb) {
        const double d = *tb - *ta;
        set(acc, 2, QStringLiteral("%1%2 points").arg(d < 0 ? QStringLiteral("−") : QStringLiteral("+")).arg(std::fabs(d), 0, 'f', 2), QString(),
            d > 0 ? better : d < 0 ? worse : QColor());
    }
    table_->setVerticalHeaderLabels(labels);

    QChart* chart = styledChart(QStringLiteral("Extra memory of A and B (KB)"));
    auto* setA = new QBarSet(QStringLiteral("A"));
    auto* setB = new QBarSet(QStringLiteral("B"));
    setA->setColor(paletteColor("text.faint"));
    setB->setColor(paletteColor("chart.series"));
    QStringList cats;
    std::vector<const ComparedMemory*> shown;
    double most = axisMaxKB_;
    // The extra memory and its parts (the peaks, ten times larger, are in the table above).
    static const std::map<std::string, QString> shortName = {{"extra", QStringLiteral("extra")},     {"classifier_input", QStringLiteral("classifier")},
                                                      {"masks", QStringLiteral("masks")},     {"biases", QStringLiteral("biases")},
                                                      {"saved_inputs", QStringLiteral("inputs")}, {"weights", QStringLiteral("weights")}};
    for (const ComparedMemory& m : rows_) {
        const auto name = shortName.find(m.key);
        if (name == shortName.end()) continue;
        shown.push_back(&m);
        cats << name->second;
        *setA << static_cast<double>(m.a) / 1024.0;
        *setB << static_cast<double>(m.b) / 1024.0;
        most = std::max({most, static_cast<double>(m.a) / 1024.0, static_cast<double>(m.b) / 1024.0});
    }
    auto* series = new QBarSeries;
    series->append(setA);
    series->append(setB);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(cats);
    auto* y = new QValueAxis;
    setNiceRange(y, 0, most * 1.05);
    y->setTitleText(QStringLiteral("KB"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    showValueOnHover(series, [shown, setA](int index, QBarSet* set) {
        if (index >= static_cast<int>(shown.size())) return QString();
        const ComparedMemory& m = *shown[static_cast<std::size_t>(index)];
        const bool isA = set == setA;
        return QStringLiteral("%1, %2: %3 bytes")
            .arg(QString::fromStdString(m.label), isA ? QStringLiteral("A") : QStringLiteral("B"),
                 QString::fromStdString(groupThousands(isA ? m.a : m.b)));
    });
    replaceChart(chart_, chart);
    new CategoryNames(chart, x, cats);   // whole names below the bars, never "class..." (issue 47)
    axisMaxKB_ = std::max(axisMaxKB_, most);
}

}  // namespace tinyscope::ui
