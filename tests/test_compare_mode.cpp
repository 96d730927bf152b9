// Compare mode of the Design-space panel (issue 22): A pinned, B edited; exact costs and deltas of
// both, predicted and measured top-1, A's diagram beside B's, chart axes fixed while comparing, and
// compare mode ends when the space changes.
#include "TestSupport.h"

#include "AppState.h"
#include "DesignSpacePanel.h"
#include "MainWindow.h"
#include "PeakMemoryChart.h"
#include "SubnetCompareView.h"
#include "SubnetDiagramView.h"
#include "SchemeCompareView.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"

#include "graph/LedgerComparison.h"
#include "graph/SparseScheme.h"
#include "zoo/Network.h"

#include "cost/SubnetComparison.h"
#include "space/ArchSampler.h"
#include "workspace/Workspace.h"

#include <QApplication>
#include <QTest>
#include <QtCharts/QChart>
#include <QtCharts/QValueAxis>

using namespace tinyscope;

namespace {
double verticalAxisMax(QChartView* view)
{
    const auto axes = view->chart()->axes(Qt::Vertical);
    for (QAbstractAxis* a : axes)
        if (auto* v = qobject_cast<QValueAxis*>(a)) return v->max();
    return -1;
}
}  // namespace

class TestCompareMode : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("tinyscope"));
        QCoreApplication::setApplicationName(QStringLiteral("tinyscope"));
    }

    void comparesThePinnedSubnetWithTheEditedOne()
    {
        // Pure core: the four costs of A and B and their exact differences.
        CostSummary a, b;
        a.macs = 1'000'000, a.peak_activation_bytes = 2048, a.params = 300, a.flash_bytes = 4096;
        b.macs = 2'500'000, b.peak_activation_bytes = 1024, b.params = 300, b.flash_bytes = 8192;
        const std::vector<ComparedCost> c = compareCosts(a, b);
        QCOMPARE(c.size(), std::size_t(4));
        QCOMPARE(c[0].delta(), std::int64_t(1'500'000));
        QCOMPARE(c[1].delta(), std::int64_t(-1024));
        QCOMPARE(c[2].delta(), std::int64_t(0));
        QCOMPARE(c[0].ratio(), 2.5);
        QCOMPARE(largestRatio(a, b), 2.5);

        ui::MainWindow w;
        ui::DesignSpacePanel* d = w.designSpacePanel();
        const DesignSpace space = w.state()->space();
        const ArchSampler sampler(space);
        const CostModel model(space);
        d->selectMin();
        const SubnetConfig minConfig = w.state()->subnet();
        QVERIFY(!d->comparing());
        d->pinCompare();
        QVERIFY(d->comparing());
        QVERIFY(!d->diagramA()->dot().empty());
        const double axisAtMin = verticalAxisMax(w.findChild<ui::PeakMemoryChart*>());
        d->selectFullMax();
        const SubnetConfig maxConfig = w.state()->subnet();
        QVERIFY(maxConfig != minConfig);
        ui::SubnetCompareView* v = d->compareView();
        const CostSummary sa = model.summary(minConfig), sb = model.summary(maxConfig);
        QCOMPARE(v->costs()[0].a, sa.macs);
        QCOMPARE(v->costs()[0].b, sb.macs);
        QCOMPARE(v->costs()[1].delta(), sb.peak_activation_bytes - sa.peak_activation_bytes);
        QCOMPARE(v->costs()[3].delta(), sb.flash_bytes - sa.flash_bytes);
        QCOMPARE(v->cellText(0, 0), QStringLiteral("%1 M").arg(sa.macs / 1e6, 0, 'f', 2));
        QVERIFY(v->cellText(0, 2).startsWith(QStringLiteral("+")));
        // The B/A axis reaches the space's largest subnet (the full-max one here), fixed while pinned.
        QCOMPARE(v->axisMax(), largestRatio(sa, model.summary(sampler.fullMaxConfig(space.resolutions.back()))));
        // The peak chart's axis does not move between the smallest and the largest B.
        QCOMPARE(verticalAxisMax(w.findChild<ui::PeakMemoryChart*>()), axisAtMin);
        // Predicted top-1 of both from the shipped predictor, and the difference in points.
        if (v->cellText(4, 0) != QStringLiteral("–")) QVERIFY(v->cellText(4, 2).endsWith(QStringLiteral("points")));
        // A measurement (the evaluation box's result) shows whenever A or B is that subnet.
        QCOMPARE(v->cellText(5, 0), QStringLiteral("–"));
        v->recordMeasured(space.name, minConfig, 81.25);
        QCOMPARE(v->cellText(5, 0), QStringLiteral("81.25 %"));
        QCOMPARE(v->cellText(5, 1), QStringLiteral("–"));
        // A's diagram and B's differ (two subnets side by side).
        QVERIFY(d->diagramA()->dot() != d->diagramDot());
        // Another space: compare mode ends (A belongs to the old space).
        w.state()->setWorkspace(shippedWorkspace("lab3-vww"));
        QVERIFY(!d->comparing());
        QVERIFY(d->diagramA()->dot().empty());
    }

    // Two sparse-update schemes of mcunet-5fps: bias-only (last 12) pinned, the published 49kb one as B.
    void comparesTwoSchemes()
    {
        ui::MainWindow w;
        ui::TrainingInspectorPanel* ti = w.trainingInspectorPanel();
        QVERIFY(ti->selectModel(QStringLiteral("mcunet-5fps")));
        ti->applyBiasOnly(12);
        ui::SchemeCompareView* v = ti->schemeCompare();
        QVERIFY(v->pin());
        const double axisAtPin = v->axisMaxKB();
        QVERIFY(ti->loadPublishedScheme(QStringLiteral("49kb")));
        // Independently: the two ledgers from the memory model.
        const Network& net = ti->layerModel()->network();
        const TrainingMemoryModel memory(net);
        const MemoryLedger a = memory.ledger(SparseScheme::biasOnly(12).resolve(net), ti->layerModel()->mode());
        const MemoryLedger b = ti->layerModel()->ledger();
        const std::vector<ComparedMemory> rows = v->rows();
        QCOMPARE(rows.size(), std::size_t(9));
        QCOMPARE(rows[0].key, std::string("extra"));
        QCOMPARE(rows[0].a, a.extra.total());
        QCOMPARE(rows[0].b, b.extra.total());
        QVERIFY(rows[0].delta() > 0);   // 49kb updates weights too
        QCOMPARE(rows[5].key, std::string("weights"));
        QCOMPARE(rows[5].a, std::int64_t(0));   // bias-only updates no weight
        QCOMPARE(rows[5].b, b.extra.weights);
        QCOMPARE(rows[8].b, b.inference_peak_bytes + b.extra.total());
        QVERIFY(v->cellText(0, 2).startsWith(QStringLiteral("+")));
        QVERIFY(v->cellText(9, 0).startsWith(QStringLiteral("–")));   // not fine-tuned yet
        // The chart's axis starts at A's extra memory and only grows while A is pinned: to B's when
        // B needs more, not back when B needs less again.
        QCOMPARE(axisAtPin, static_cast<double>(a.extra.total()) / 1024.0);
        QCOMPARE(v->axisMaxKB(), static_cast<double>(b.extra.total()) / 1024.0);
        ti->applyBiasOnly(12);
        QCOMPARE(v->axisMaxKB(), static_cast<double>(b.extra.total()) / 1024.0);
        // Another model ends the comparison.
        QVERIFY(ti->selectModel(QStringLiteral("mbv2-w0.35")));
        QVERIFY(!v->pinned());
    }
};

QTEST_MAIN(TestCompareMode)
#include "test_compare_mode.moc"
