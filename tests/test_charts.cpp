// The charts' axes and legends (issue 47), offscreen, without any training: round ticks on every
// value axis from one helper (ChartStyle's niceScale: 85.88..86.70 reads 85.8 86.0 … 86.8); the
// fine-tune curve's epoch axis with integer ticks only, its epoch-0 point and running-loss points;
// the training-memory chart naming the axis of its budget line and fitting a small scheme by
// default; the fine-tune scatter's legend and the charts' titles wrapping at 1280×720 (also in
// presentation mode) instead of squeezing the plot or being cut to "…"; the Search winner's
// diagram opening at nearly the screen's size.
#include "TestSupport.h"

#include "AppState.h"
#include "ChartLegend.h"
#include "ChartStyle.h"
#include "FineTuneCurve.h"
#include "FineTunePane.h"
#include "LiveLineChart.h"
#include "Presentation.h"
#include "SchemeAccuracyScatter.h"
#include "SubnetDiagramView.h"
#include "TrainingInspectorPanel.h"
#include "TrainingMemoryChart.h"
#include "WinnerCard.h"

#include "cost/CostModel.h"
#include "graph/MemoryLedger.h"
#include "graph/SparseScheme.h"
#include "search/SearchResult.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "zoo/ZooCatalog.h"

#include <QDialog>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QScreen>
#include <QTabWidget>
#include <QToolButton>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <cmath>

using namespace tinyscope;
using namespace tinyscope::ui;

namespace {

// A round tick step: 1, 2 or 5 × 10^k.
bool isRoundStep(double step)
{
    const double p = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    const double m = step / p;
    return std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9;
}

// Every tick of `axis` is a multiple of a round step and its labels are distinct.
QString roundTicksProblem(const QValueAxis* axis)
{
    if (axis->tickType() != QValueAxis::TicksDynamic) return QStringLiteral("%1: fixed tick count, not round ticks").arg(axis->titleText());
    const double step = axis->tickInterval();
    if (!isRoundStep(step)) return QStringLiteral("%1: step %2").arg(axis->titleText()).arg(step);
    for (double v : tickValues(axis))
        if (std::abs(v / step - std::round(v / step)) > 1e-6) return QStringLiteral("%1: tick %2 is not a multiple of %3").arg(axis->titleText()).arg(v).arg(step);
    QStringList labels = tickLabels(axis);
    if (labels.removeDuplicates() > 0) return QStringLiteral("%1: repeated labels %2").arg(axis->titleText(), tickLabels(axis).join(QLatin1Char(' ')));
    return QString();
}

// The texts a chart draws that Qt Charts cut short ("..." in place of the rest).
QStringList cutTexts(QChartView* view)
{
    QStringList out;
    for (QGraphicsItem* item : view->scene()->items())
        if (auto* t = dynamic_cast<QGraphicsTextItem*>(item))
            if (t->isVisible() && (t->toPlainText().contains(QStringLiteral("...")) || t->toPlainText().contains(QChar(0x2026))))
                out << t->toPlainText();
    return out;
}

void settle()
{
    for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
}

}  // namespace

class TestCharts : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(tmp.isValid());
        qputenv("XDG_STATE_HOME", (tmp.path() + QStringLiteral("/state")).toLocal8Bit());
    }

    void theNiceRangeHelperGivesRoundTicks()
    {
        const NiceScale s = niceScale(85.88, 86.70);
        QCOMPARE(s.min, 85.8);
        QCOMPARE(s.max, 86.8);
        QCOMPARE(s.step, 0.2);
        QCOMPARE(s.decimals, 1);
        QValueAxis a;
        setNiceRange(&a, 85.88, 86.70);
        QCOMPARE(tickLabels(&a), (QStringList{"85.8", "86.0", "86.2", "86.4", "86.6", "86.8"}));
        // Other ranges: 1-2-5 steps, at most six ticks, the range covered.
        setNiceRange(&a, 0, 281.6);   // a 256 KB budget × 1.1
        QCOMPARE(tickLabels(&a), (QStringList{"0", "100", "200", "300"}));
        QVERIFY(roundTicksProblem(&a).isEmpty());
        QCOMPARE(niceScale(0, 2.3).step, 0.5);
        QCOMPARE(niceScale(0, 2.3).max, 2.5);
        QCOMPARE(niceScale(0.91, 0.937).step, 0.01);
        QCOMPARE(niceScale(0.91, 0.937).decimals, 2);
        for (auto [lo, hi] : {std::pair{85.88, 86.70}, {0.0, 281.6}, {12.3, 12.3}, {-3.0, 7.0}, {0.0, 1e-4}, {1e5, 3e5}}) {
            const NiceScale n = niceScale(lo, hi);
            QVERIFY2(n.min <= std::min(lo, hi) && n.max >= hi && n.ticks() <= 7 && n.ticks() >= 2 && isRoundStep(n.step),
                     qPrintable(QStringLiteral("%1..%2: %3..%4 by %5").arg(lo).arg(hi).arg(n.min).arg(n.max).arg(n.step)));
        }
        // Integers: epochs 0..2 read "0 1 2", never "0 1 1 2 2".
        setNiceTicks(&a, 0, 2, 11, true);
        QCOMPARE(tickLabels(&a), (QStringList{"0", "1", "2"}));
        setNiceTicks(&a, 0, 50, 11, true);
        QCOMPARE(tickLabels(&a), (QStringList{"0", "5", "10", "15", "20", "25", "30", "35", "40", "45", "50"}));
        setNiceTicks(&a, 0, 13, 11, true);
        QCOMPARE(tickLabels(&a), (QStringList{"0", "2", "4", "6", "8", "10", "12"}));
    }

    void liveChartsHaveRoundTicksAndIntegerCounts()
    {
        LiveLineChart c(QStringLiteral("accuracy"), QStringLiteral("generation"), QStringLiteral("top-1 %"), false);
        const int s = c.addSeries(QStringLiteral("best so far"), Qt::blue);
        c.setXSpan(2);
        c.append(s, 0, 85.88);
        c.append(s, 1, 86.31);
        c.append(s, 2, 86.70);
        QCOMPARE(tickLabels(c.xAxis()), (QStringList{"0", "1", "2"}));
        QVERIFY2(roundTicksProblem(c.yAxis()).isEmpty(), qPrintable(roundTicksProblem(c.yAxis())));
        QVERIFY(c.yAxis()->min() <= 85.88 && c.yAxis()->max() >= 86.70);
        for (const QString& l : tickLabels(c.yAxis())) QVERIFY2(l.size() <= 4, qPrintable(l));   // 85.8, not 85.88
    }

    void theFineTuneCurveHasIntegerEpochTicksAnEpoch0PointAndBatchProgress()
    {
        FineTuneCurve c;
        c.start(QStringLiteral("bias-only:12 · QAS on"), 2, false);
        QCOMPARE(tickLabels(c.epochAxis()), (QStringList{"0", "1", "2"}));
        QVERIFY(!c.hasInitialPoint());
        c.setInitialTop1(10.5);   // the core measured the new head: epoch 0
        QVERIFY(c.hasInitialPoint());
        QLineSeries* top1 = nullptr;
        for (QAbstractSeries* s : c.chart()->series())
            if (s->name().startsWith(QStringLiteral("top-1"))) top1 = qobject_cast<QLineSeries*>(s);
        QVERIFY(top1);
        QCOMPARE(top1->count(), 1);
        QCOMPARE(top1->at(0), QPointF(0, 10.5));
        QCOMPARE(c.points(), 0);   // no epoch yet
        // Steps of epoch 1 before it ends: the running loss at fractional epochs.
        std::vector<FineTuneBatch> steps;
        for (int b = 1; b <= 4; ++b) steps.push_back(FineTuneBatch{1, b, 8, 2.4 - 0.1 * b});
        c.addBatches(steps);
        QCOMPARE(c.batchPoints().size(), 4);
        QCOMPARE(c.batchPoints().front(), QPointF(0.125, 2.3));
        QCOMPARE(c.batchPoints().back().x(), 0.5);
        QVERIFY(c.lossAxis()->max() >= 2.3);
        QVERIFY2(roundTicksProblem(c.lossAxis()).isEmpty(), qPrintable(roundTicksProblem(c.lossAxis())));
        FineTuneEpoch e;
        e.epoch = 1;
        e.top1 = 71.25;
        e.loss = 1.5;
        c.addEpoch(e);
        QCOMPARE(top1->count(), 2);
        QCOMPARE(c.points(), 1);
        QVERIFY2(roundTicksProblem(c.top1Axis()).isEmpty(), qPrintable(roundTicksProblem(c.top1Axis())));
        QVERIFY(c.top1Axis()->min() <= 10.5 && c.top1Axis()->max() >= 71.25);
        // A long epoch is thinned to a few dozen points an epoch, the latest step always shown.
        std::vector<FineTuneBatch> many;
        for (int b = 1; b <= 1000; ++b) many.push_back(FineTuneBatch{2, b, 1000, 1.0});
        c.addBatches(many);
        const QList<QPointF> pts = c.batchPoints();
        QVERIFY2(pts.size() <= 4 + FineTuneCurve::kBatchPointsPerEpoch + 4, qPrintable(QString::number(pts.size())));
        QCOMPARE(pts.back().x(), 2.0);
        QCOMPARE(pts[4].x(), 1.001);   // epoch 2's first step stays
        // Integer ticks for any run length, never a repeated label.
        for (int epochs : {1, 3, 7, 10, 12, 50}) {
            c.start(QStringLiteral("run"), epochs, false);
            const QStringList labels = tickLabels(c.epochAxis());
            QVERIFY2(roundTicksProblem(c.epochAxis()).isEmpty(), qPrintable(labels.join(QLatin1Char(' '))));
            QCOMPARE(labels.front(), QStringLiteral("0"));
            QCOMPARE(c.epochAxis()->max(), double(epochs));
            if (epochs <= 10) QCOMPARE(labels.back(), QString::number(epochs));
            QVERIFY(c.epochAxis()->tickInterval() == std::round(c.epochAxis()->tickInterval()));
        }
        QVERIFY(!c.hasInitialPoint());   // a new run: no epoch 0 until it is measured
        QVERIFY(c.batchPoints().isEmpty());
    }

    void theMemoryChartNamesTheBudgetsAxisAndFitsASmallScheme()
    {
        const Network net = zooModel("mcunet-5fps");
        const TrainingMemoryModel core(net);
        TrainingMemoryChart chart;
        QVERIFY(!chart.fixedAxes());   // fitted by default: a small scheme is not a flat line
        chart.setReferenceLedger(core.ledger(SparseScheme::lastLayers(net, net.numBackboneConvs()).resolve(net)));
        const MemoryLedger small = core.ledger(SparseScheme::biasOnly(12).resolve(net));
        chart.setLedger(small, 256);
        // The budget line is on the right axis, and its legend entry says so, in the axis' words.
        QLineSeries* budget = chart.budgetSeries();
        QVERIFY(budget->attachedAxes().contains(chart.rightAxis()));
        QCOMPARE(chart.rightAxis()->alignment(), Qt::AlignRight);
        QCOMPARE(chart.leftAxis()->alignment(), Qt::AlignLeft);
        QCOMPARE(budget->name(), QStringLiteral("SRAM budget 256 KB (right axis, KB in all)"));
        QVERIFY(chart.rightAxis()->titleText().startsWith(QStringLiteral("KB in all")));
        QCOMPARE(chart.leftAxis()->titleText(), QStringLiteral("KB / conv"));
        for (const QValueAxis* a : {chart.leftAxis(), chart.rightAxis()})
            QVERIFY2(roundTicksProblem(a).isEmpty(), qPrintable(roundTicksProblem(a)));
        // Fitted: the tallest bar fills most of the left axis; fixed: a sliver, and the title says how much.
        double tallest = 0;
        for (const LedgerRow& r : small.rows) tallest = std::max(tallest, r.totalBytes() / 1024.0);
        QVERIFY2(tallest / chart.leftAxisMaxKB() > 0.4, qPrintable(QString::number(chart.leftAxisMaxKB())));
        QVERIFY(chart.titleText().isEmpty());
        chart.setFixedAxes(true);
        QVERIFY(tallest / chart.leftAxisMaxKB() < 0.1);
        QVERIFY2(chart.titleText().startsWith(QStringLiteral("Fixed axes: the tallest bar is")), qPrintable(chart.titleText()));
        QVERIFY(TrainingMemoryChart::fixedAxesToolTip().contains(QStringLiteral("off by default")));
    }

    // At 1280×720 the Fine-tune tab's two charts sit side by side: the scatter's long budget entry
    // wraps instead of holding the scatter ~500 px wide, and no axis or chart title is cut to "…",
    // in presentation mode either.
    void theFineTuneChartsFitA1280x720Window()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.resize(1280, 680);   // the panel's share of a 1280×720 window
        panel.show();
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        FineTunePane* ft = panel.fineTunePane();
        panel.rightTabs()->setCurrentWidget(ft);
        panel.setBudgetKB(1000);   // far right of the run: the long "off the chart" entry
        SchemeRun run;
        run.run = tmp.path() + QStringLiteral("/run-a");
        run.model = QStringLiteral("a model");
        run.modelName = QStringLiteral("a model");
        run.scheme = QStringLiteral("bias-only:4");
        run.epochs = 3;
        run.top1 = 71.3;
        run.extra_bytes = 2100;
        run.inference_peak_bytes = 14000;
        run.total_bytes = 16100;
        SchemeAccuracyScatter* scatter = ft->scatter();
        scatter->addRun(run);
        QCOMPARE(scatter->points(), 1);
        ft->curve()->start(QStringLiteral("bias-only of the last 4 convs, the classifier's weights and biases · QAS on"), 3, false);
        ft->curve()->setInitialTop1(10.2);
        settle();
        for (bool presentation : {false, true}) {
            Presentation::set(presentation);
            settle();
            ChartLegend* legend = scatter->legend();
            QLabel* longest = nullptr;
            for (QLabel* l : legend->labels())
                if (l->property("entry").toString().startsWith(QStringLiteral("off the chart"))) longest = l;
            QVERIFY2(longest, qPrintable(legend->texts().join(QLatin1Char('|'))));
            const int oneLine = longest->fontMetrics().horizontalAdvance(longest->property("entry").toString());
            // The entry no longer sets the strip's (and so the scatter's) least width; it wraps when the strip is narrower.
            QVERIFY2(legend->minimumSizeHint().width() < oneLine / 2, qPrintable(QString::number(legend->minimumSizeHint().width())));
            QCOMPARE(longest->wordWrap(), oneLine > legend->contentsRect().width());
            for (QLabel* l : legend->labels()) {   // whole, inside the strip
                const QRect r(l->mapTo(legend, QPoint(0, 0)), l->size());
                QVERIFY2(legend->rect().contains(r), qPrintable(QStringLiteral("%10 %1: %2,%3 %4×%5 in %6×%7, wrap %8, hint %9").arg(l->property("entry").toString()).arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height()).arg(legend->width()).arg(legend->height()).arg(l->wordWrap()).arg(l->sizeHint().width()).arg(presentation)));
                QVERIFY2(l->height() >= l->heightForWidth(l->width()) || !l->wordWrap(), qPrintable(l->property("entry").toString()));
            }
            // The plot gets the width the legend no longer takes.
            QVERIFY2(scatter->view()->chart()->plotArea().width() > 120, qPrintable(QString::number(scatter->view()->chart()->plotArea().width())));
            // No chart draws a cut text; the titles are wrapping labels above the legends.
            for (QChartView* v : {static_cast<QChartView*>(ft->curve()), scatter->view()})
                QVERIFY2(cutTexts(v).isEmpty(), qPrintable(QStringLiteral("%1: %2 in a %3×%4 chart").arg(presentation).arg(cutTexts(v).join(QLatin1Char('|'))).arg(v->width()).arg(v->height())));
            QVERIFY(scatter->titleText().startsWith(QStringLiteral("Top-1 vs extra memory")));
            QCOMPARE(scatter->points(), 1);
            QVERIFY(ft->curve()->chart()->title().isEmpty());
            bool curveTitleShown = false;
            for (ChartLegend* l : ft->findChildren<ChartLegend*>())
                curveTitleShown = curveTitleShown || (l->title() == ft->curve()->titleText() && l->titleLabel()->isVisible());
            QVERIFY(curveTitleShown);
        }
        Presentation::set(false);
    }

    void theWinnersDiagramOpensAtNearlyTheScreensSize()
    {
        const DesignSpace space = loadSpace(defaultSpaceName());
        auto result = std::make_shared<SearchResult>();
        result->found = true;
        result->best.config = ArchSampler(space).fullMaxConfig(space.resolutions.back());
        result->best.cost = CostModel(space).summary(result->best.config);
        result->best.accuracy = 88.5;
        WinnerCard card;
        card.resize(420, 360);   // the card's share of the Search panel at 1280×720
        card.show();
        QVERIFY(!card.fullSizeButton()->isEnabled());
        card.showWinner(result, space);
        settle();
        QVERIFY(!card.diagramDot().empty());
        QToolButton* full = card.fullSizeButton();
        QVERIFY(full->isEnabled() && full->isVisible());
        QVERIFY(card.diagram()->rect().contains(QRect(full->pos(), full->size())));   // in the diagram's corner
        full->click();
        settle();
        QDialog* window = card.fullDiagramWindow();
        QVERIFY(window && window->isVisible());
        const QRect avail = card.screen()->availableGeometry();
        QCOMPARE(window->size(), QSize(avail.width() * 9 / 10, avail.height() * 9 / 10));
        QCOMPARE(card.fullDiagram()->dot(), card.diagramDot());
        // Drawn larger: the fitted diagram's zoom in the window against the card's thumbnail.
        const double thumb = card.diagram()->transform().m11(), big = card.fullDiagram()->transform().m11();
        QVERIFY2(big > 1.5 * thumb, qPrintable(QStringLiteral("thumbnail %1, window %2").arg(thumb).arg(big)));
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
