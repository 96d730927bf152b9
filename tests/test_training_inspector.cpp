// The Training-inspector panel: rows toggled through the panel's table model give exactly the
// core's memory ledger (totals, per-layer rows, the chart's bars and running total) and the
// core's pruned graph, recoloured without a new layout for bias toggles and laid out again for
// ratio changes; undo/redo walk the edits back and forth; the published schemes give the
// published byte counts; scheme files round-trip; the CSV, DOT, SVG and PNG exports carry the
// real figures; rows TinyEngine cannot compile are flagged; any TrainingGraph can be shown; the
// panel renders (not blank) with the graph laid out.
#include "ImageSupport.h"
#include "TestSupport.h"

#include "AppState.h"
#include "workspace/Workspace.h"
#include "ChartLegend.h"
#include "MainWindow.h"
#include "NodeInspector.h"
#include "SvgGraphView.h"
#include "TrainingGraphFile.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"
#include "TrainingMemoryChart.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "io/DataPaths.h"
#include "nn/quantize/QuantizationJob.h"
#include "space/ArchSampler.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <QComboBox>
#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QFile>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>

using namespace tinyscope;
using test::inputErrorOf;
using namespace tinyscope::ui;

namespace {

// The ledger the panel shows must be the core's, number for number.
void compareLedgers(const MemoryLedger& a, const MemoryLedger& b)
{
    QCOMPARE(a.extra.total(), b.extra.total());
    QCOMPARE(a.extra.totalBits(), b.extra.totalBits());
    QCOMPARE(a.peak_bytes, b.peak_bytes);
    QCOMPARE(a.peak_bytes_no_reorder, b.peak_bytes_no_reorder);
    QCOMPARE(a.inference_peak_bytes, b.inference_peak_bytes);
    QCOMPARE(a.trainable_bytes, b.trainable_bytes);
    QCOMPARE(a.rows.size(), b.rows.size());
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
        QCOMPARE(a.rows[i].mask_bits, b.rows[i].mask_bits);
        QCOMPARE(a.rows[i].bias_bytes, b.rows[i].bias_bytes);
        QCOMPARE(a.rows[i].saved_input_bytes, b.rows[i].saved_input_bytes);
        QCOMPARE(a.rows[i].weight_bytes, b.rows[i].weight_bytes);
    }
}

bool toggleBias(TrainingLayerModel* m, int row, bool on)
{
    return m->setData(m->index(row, TrainingLayerModel::Bias), on ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
}

bool setRatio(TrainingLayerModel* m, int row, double r)
{
    return m->setData(m->index(row, TrainingLayerModel::Weight), r, TrainingLayerModel::RatioRole);
}

std::int64_t publishedTotal(const Json& ref, const std::string& model, const std::string& name)
{
    for (const Json& e : ref["schemes"])
        if (e["model"] == model && e["name"] == name) return e["breakdown"]["total_bytes"].get<std::int64_t>();
    return -1;
}

}  // namespace

class TestTrainingInspector : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    QString path(const char* name) const { return tmp.path() + QLatin1Char('/') + QLatin1String(name); }

    // The window at `size` on the inspector with MIT's demo (mcunet-5fps, published 49kb) laid
    // out; nullptr when the layout did not finish.
    static TrainingInspectorPanel* showMitDemo(MainWindow& w, QSize size)
    {
        w.resize(size);
        w.show();
        TrainingInspectorPanel* panel = w.trainingInspectorPanel();
        w.tabs()->setCurrentWidget(panel);
        if (!panel->selectModel(QStringLiteral("mcunet-5fps")) || !panel->loadPublishedScheme(QStringLiteral("49kb")) ||
            !panel->waitForGraph(300000))
            return nullptr;
        QCoreApplication::processEvents();
        return panel;
    }

private Q_SLOTS:
    void togglingRowsThroughTheModelGivesTheCoresLedgerAndGraph()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.selectModel(QStringLiteral("mcunet-5fps")));
        TrainingLayerModel* m = panel.layerModel();
        const Network net = zooModel("mcunet-5fps");
        const TrainingMemoryModel core(net);
        QCOMPARE(m->rowCount(), 43);
        QCOMPARE(m->data(m->index(24, TrainingLayerModel::Layer)).toString(), QStringLiteral("blocks.8.pw1"));
        QCOMPARE(m->data(m->index(24, TrainingLayerModel::Macs)).toString(), QStringLiteral("442,368"));
        QCOMPARE(m->data(m->index(24, TrainingLayerModel::Shape)).toString(), QStringLiteral("48×8×8→144×8×8"));
        panel.resetScheme();
        QVERIFY(panel.waitForGraph(300000));
        TrainingGraphPane* pane = panel.graphPane();
        const int laidOutOps = static_cast<int>(pane->graph().ops.size());
        QCOMPARE(pane->view()->nodeNames().size(), laidOutOps);

        // Biases of convs 41 down to 22, one row at a time; after each, the panel's ledger is the core's.
        SparseScheme expected = SparseScheme::biasOnly(0);
        for (int row = 41; row >= 22; --row) {
            QVERIFY(toggleBias(m, row, true));
            expected.n_bias_update = 42 - row;
            if (row % 5 == 0 || row == 22) compareLedgers(m->ledger(), core.ledger(expected.resolve(net)));
            QVERIFY2(!pane->layoutPending(), "a bias toggle must recolour, not lay out again");
        }
        QCOMPARE(m->data(m->index(22, TrainingLayerModel::Bias), Qt::CheckStateRole).toInt(), int(Qt::Checked));
        QCOMPARE(m->data(m->index(21, TrainingLayerModel::Bias), Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        // The pruned graph equals a fresh build for the same scheme (same ops kept, same outputs).
        const TrainingGraph fresh = buildTrainingGraph(net, expected.resolve(net));
        QCOMPARE(pane->graph().liveOps(), fresh.liveOps());
        QCOMPARE(pane->graph().outputs.size(), fresh.outputs.size());
        QCOMPARE(pane->view()->nodeNames().size(), laidOutOps);

        // A weight chain with a channel count the graph was not built with: new ops, a new layout.
        const int built24 = pane->graph().weight_channels[std::size_t(net.convLayers()[24])];
        QVERIFY(setRatio(m, 24, built24 == 24 ? 0.125 : 0.5));
        QVERIFY2(pane->layoutPending(), "a new channel count changes the ops: a new layout");
        // Weight ratios of convs 24, 27, 30: the published "49kb" scheme, 50,944 B.
        QVERIFY(setRatio(m, 24, 0.25));
        QVERIFY(setRatio(m, 27, 0.5));
        QVERIFY(setRatio(m, 30, 0.5));
        const ResolvedScheme published = schemeByName("mcunet-5fps/49kb", &net).resolve(net);
        QVERIFY(sameUpdates(m->scheme(), published));
        compareLedgers(m->ledger(), core.ledger(published));
        QCOMPARE(m->ledger().extra.total(), std::int64_t(50944));
        QCOMPARE(m->data(m->index(24, TrainingLayerModel::Weight)).toString(), QStringLiteral("1/4  (12/48)"));
        QCOMPARE(m->data(m->index(24, TrainingLayerModel::Extra)).toString(), QStringLiteral("4,224"));
        QCOMPARE(m->schemeDescription(), QStringLiteral("mcunet-5fps/49kb"));
        QVERIFY2(panel.totalsText().contains(QStringLiteral("49.75 KB")), qPrintable(panel.totalsText()));
        QVERIFY2(panel.totalsText().contains(QStringLiteral("209.8 KB")), qPrintable(panel.totalsText()));   // 163,840 + 50,944

        // The chart plots the same rows (KB) and the running total from the head backwards.
        const MemoryLedger& l = m->ledger();
        TrainingMemoryChart* chart = panel.chart();
        QCOMPARE(chart->values(0).size(), 43);
        QCOMPARE(chart->values(0)[24], qreal(9216) / 8 / 1024);
        QCOMPARE(chart->values(1)[24], qreal(576) / 1024);
        QCOMPARE(chart->values(2)[24], qreal(768) / 1024);
        QCOMPARE(chart->values(3)[24], qreal(1728) / 1024);
        QCOMPARE(chart->values(2)[42], qreal(160) / 1024);   // the classifier's saved input
        QCOMPARE(chart->runningTotalKB().size(), 43);
        QCOMPARE(chart->runningTotalKB()[0], (163840.0 + 50944.0) / 1024.0);
        QCOMPARE(chart->runningTotalKB()[42], (163840.0 + 160.0) / 1024.0);
        QCOMPARE(l.inference_peak_bytes, std::int64_t(163840));
        // Hovering conv 24's bar names its exact bytes; the line's left end, the scheme's total.
        QVERIFY2(chart->barText(24).contains(QStringLiteral("masks 9,216 bits, biases 576 B, saved inputs 768 B, weights 1,728 B")),
                 qPrintable(chart->barText(24)));
        QVERIFY2(chart->totalText(0).contains(QStringLiteral("%1 KB").arg((163840.0 + 50944.0) / 1024.0, 0, 'f', 1)), qPrintable(chart->totalText(0)));
        QVERIFY(chart->barText(43).isEmpty());

        QVERIFY(panel.waitForGraph(300000));
        const TrainingGraph fresh49 = buildTrainingGraph(net, published);
        QCOMPARE(pane->graph().ops.size(), fresh49.ops.size());
        QCOMPARE(pane->graph().liveOps(), fresh49.liveOps());
        QCOMPARE(pane->view()->nodeNames().size(), int(fresh49.ops.size()));
        QVERIFY(pane->view()->overlayText().isEmpty());

        // The classifier is always updated; a ratio that selects no channel is refused.
        QVERIFY(!toggleBias(m, 42, false));
        QVERIFY(!setRatio(m, 0, 0.125));   // the stem has 3 input channels
        QVERIFY(sameUpdates(m->scheme(), published));
    }

    // Issue 22: ticked, the chart's axes are fixed per model (its full update), so a class sees the
    // magnitude change between schemes; unticked (the default since issue 47) they fit the scheme.
    void memoryChartAxesStayFixedAcrossSchemes()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.selectModel(QStringLiteral("mcunet-5fps")));
        TrainingMemoryChart* chart = panel.chart();
        QVERIFY(!chart->fixedAxes());
        chart->setFixedAxes(true);
        const Network net = zooModel("mcunet-5fps");
        const TrainingMemoryModel core(net);
        auto tallestKB = [](const MemoryLedger& l) {
            double m = 0;
            for (const LedgerRow& r : l.rows) m = std::max(m, r.totalBytes() / 1024.0);
            return m;
        };
        const double fullBar = tallestKB(core.ledger(SparseScheme::lastLayers(net, net.numBackboneConvs()).resolve(net)));
        const double bar12 = tallestKB(core.ledger(SparseScheme::biasOnly(12).resolve(net)));
        QVERIFY(bar12 * 10 < fullBar);
        QVERIFY(panel.loadPublishedScheme(QStringLiteral("49kb")));
        const double left = chart->leftAxisMaxKB(), right = chart->rightAxisMaxKB();
        QVERIFY2(left >= fullBar, qPrintable(QString::number(left)));
        panel.applyBiasOnly(12);
        QCOMPARE(chart->leftAxisMaxKB(), left);
        QCOMPARE(chart->rightAxisMaxKB(), right);
        panel.resetScheme();
        QCOMPARE(chart->leftAxisMaxKB(), left);
        panel.applyBiasOnly(12);
        chart->setFixedAxes(false);   // fitted to bias-only:12
        QVERIFY2(chart->leftAxisMaxKB() >= bar12 && chart->leftAxisMaxKB() < fullBar, qPrintable(QString::number(chart->leftAxisMaxKB())));
        QVERIFY(chart->rightAxisMaxKB() < right);
        chart->setFixedAxes(true);
        QCOMPARE(chart->leftAxisMaxKB(), left);
    }

    // Issue 22: the graph's views are selectable, the legend follows them, "kept ops only" drops
    // pruned ops (a bias toggle lays the smaller graph out, outlining what changed), a collapsed
    // block expands on click, and a laid-out view comes back from the cache.
    void graphViewsShowKeptOpsAndCollapseBlocks()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.resize(1400, 900);
        panel.show();
        QVERIFY(panel.selectModel(QStringLiteral("mcunet-5fps")));
        QVERIFY(panel.loadPublishedScheme(QStringLiteral("49kb")));
        TrainingGraphPane* pane = panel.graphPane();
        QVERIFY(panel.waitForGraph(300000));
        const int all = static_cast<int>(pane->graph().ops.size());
        QCOMPARE(pane->view()->nodeNames().size(), all);
        QVERIFY(pane->legend()->findChild<QWidget*>(QStringLiteral("legend-pruned"))->isVisibleTo(pane));
        QCOMPARE(pane->viewBox()->count(), 3);
        for (int i = 0; i < 3; ++i) QVERIFY(!pane->viewBox()->itemData(i, Qt::ToolTipRole).toString().isEmpty());

        pane->viewBox()->setCurrentIndex(int(TrainingGraphViewMode::Kept));
        QCOMPARE(pane->viewMode(), TrainingGraphViewMode::Kept);
        QVERIFY(pane->waitForLayout(300000));
        int live = 0;
        for (char c : pane->graph().live) live += c ? 1 : 0;
        QCOMPARE(pane->view()->nodeNames().size(), live);
        QVERIFY(!pane->legend()->findChild<QWidget*>(QStringLiteral("legend-pruned"))->isVisibleTo(pane));

        // Bias-only:12 re-prunes the same ops: a smaller drawing, what appeared or changed outlined.
        const int hits = pane->layoutCacheHits();
        const std::vector<char> live49 = pane->graph().live;
        panel.applyBiasOnly(12);
        QVERIFY(pane->waitForLayout(300000));
        int live12 = 0;
        for (char c : pane->graph().live) live12 += c ? 1 : 0;
        QVERIFY(live12 < live);
        QCOMPARE(pane->view()->nodeNames().size(), live12);
        int appeared = 0, vanished = 0;
        for (std::size_t i = 0; i < live49.size(); ++i) {
            appeared += !live49[i] && pane->graph().live[i];
            vanished += live49[i] && !pane->graph().live[i];
        }
        QVERIFY(vanished > 0);
        QCOMPARE(pane->vanishedOps(), vanished);
        QCOMPARE(int(pane->changedOps().size()), appeared);
        QVERIFY(pane->summaryText().contains(QStringLiteral("disappeared")));
        // Back to 49kb: the kept view comes from the cache.
        QVERIFY(panel.loadPublishedScheme(QStringLiteral("49kb")));
        QVERIFY(pane->waitForLayout(300000));
        QCOMPARE(pane->layoutCacheHits(), hits + 1);
        QCOMPARE(pane->view()->nodeNames().size(), live);

        // Collapsed per block; a click on a block expands it.
        pane->setCollapsed(true);
        QVERIFY(pane->waitForLayout(300000));
        const TrainingGraphView& v = pane->graphView();
        QVERIFY(v.collapsedNodes() > 0);
        QCOMPARE(pane->view()->nodeNames().size(), int(v.nodes.size()));
        QVERIFY(pane->legend()->findChild<QWidget*>(QStringLiteral("legend-group"))->isVisibleTo(pane));
        int block = -1;
        std::size_t before = v.nodes.size();
        for (const TrainingGraphViewNode& n : v.nodes)
            if (n.collapsed) {
                block = n.group;
                break;
            }
        QVERIFY(pane->toggleGroup(block));
        QVERIFY(pane->waitForLayout(300000));
        QVERIFY(pane->graphView().nodes.size() > before);
        QVERIFY(pane->graphView().options.expanded.count(block));

        // Backward only: no forward op, no forward entry in the legend.
        pane->setCollapsed(false);
        pane->setViewMode(TrainingGraphViewMode::Backward);
        QVERIFY(pane->waitForLayout(300000));
        QCOMPARE(pane->view()->nodeNames().size(), trainingGraphViewOpCount(pane->graph(), TrainingGraphViewMode::Backward));
        QVERIFY(!pane->legend()->findChild<QWidget*>(QStringLiteral("legend-forward"))->isVisibleTo(pane));
        pane->setViewMode(TrainingGraphViewMode::Whole);
        QVERIFY(pane->waitForLayout(300000));
        QCOMPARE(pane->view()->nodeNames().size(), all);
    }

    void undoAndRedoWalkTheEditsBackAndForth()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.selectModel(QStringLiteral("mcunet-5fps"));
        TrainingLayerModel* m = panel.layerModel();
        QUndoStack* undo = m->undoStack();
        QCOMPARE(undo->count(), 0);   // a new model starts a new history
        std::vector<ResolvedScheme> states{m->scheme()};
        panel.resetScheme();
        states.push_back(m->scheme());
        toggleBias(m, 41, true);
        states.push_back(m->scheme());
        setRatio(m, 39, 1.0);
        states.push_back(m->scheme());
        panel.applyBiasOnly(6);
        states.push_back(m->scheme());
        panel.applyLastLayers(3);
        states.push_back(m->scheme());
        QVERIFY(panel.loadPublishedScheme(QStringLiteral("99kb")));
        states.push_back(m->scheme());
        QCOMPARE(undo->count(), 6);
        for (int i = 6; i > 0; --i) {
            QVERIFY(sameUpdates(m->scheme(), states[std::size_t(i)]));
            undo->undo();
            QVERIFY(sameUpdates(m->scheme(), states[std::size_t(i - 1)]));
        }
        QVERIFY(!undo->canUndo());
        for (int i = 1; i <= 6; ++i) {
            undo->redo();
            QVERIFY(sameUpdates(m->scheme(), states[std::size_t(i)]));
        }
        const Network net = zooModel("mcunet-5fps");
        compareLedgers(m->ledger(), TrainingMemoryModel(net).ledger(schemeByName("mcunet-5fps/99kb", &net).resolve(net)));
        // An edit that changes nothing is not a step.
        toggleBias(m, 41, true);
        QCOMPARE(undo->count(), 6);
        QCOMPARE(undo->undoText(), QStringLiteral("load mcunet-5fps/99kb"));
    }

    void theRatioCellOffersTheAllowedRatios()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.selectModel(QStringLiteral("mcunet-5fps"));
        panel.resetScheme();
        TrainingLayerModel* m = panel.layerModel();
        QTableView* table = panel.table();
        table->show();
        auto editorFor = [&](int row) -> QComboBox* {
            const QModelIndex idx = m->index(row, TrainingLayerModel::Weight);
            table->setCurrentIndex(idx);
            table->edit(idx);
            return table->viewport()->findChild<QComboBox*>();
        };
        // The stem has 3 input channels: 1/8 and 1/4 select none and are disabled.
        QComboBox* box = editorFor(0);
        QVERIFY(box);
        QCOMPARE(box->count(), 5);
        auto* items = qobject_cast<QStandardItemModel*>(box->model());
        QVERIFY(items);
        QCOMPARE(items->item(1)->isEnabled(), false);
        QCOMPARE(items->item(2)->isEnabled(), false);
        QCOMPARE(items->item(3)->isEnabled(), true);
        QCOMPARE(box->itemText(3), QStringLiteral("1/2  (1/3)"));
        // Moving on closes the editor without a change (ratio 0 stays 0: no undo step).
        table->setCurrentIndex(m->index(1, TrainingLayerModel::Layer));
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QVERIFY(!table->viewport()->findChild<QComboBox*>());
        QCOMPARE(m->undoStack()->count(), 1);   // the reset only
        // Choosing 1/2 on conv 27 commits at once: one undo step, the ledger follows.
        box = editorFor(27);
        QVERIFY(box);
        QCOMPARE(box->itemText(3), QStringLiteral("1/2  (24/48)"));
        box->setCurrentIndex(3);
        Q_EMIT box->activated(3);
        QCOMPARE(m->scheme().conv(27).ratio, 0.5);
        QCOMPARE(m->scheme().conv(27).k, 24);
        QCOMPARE(m->undoStack()->undoText(), QStringLiteral("weight of conv 27 at 1/2"));
        QCOMPARE(m->ledger().rows[27].weight_bytes, std::int64_t(192 * 24));
    }

    void publishedSchemesGiveThePublishedByteCounts()
    {
        REQUIRE_SHARED();
        const Json ref = readJsonFile(test::sharedPath("reference/tiny-training/schemes.json"));
        AppState state;
        TrainingInspectorPanel panel(&state);
        int checked = 0;
        for (const char* model : {"mbv2-w0.35", "mcunet-5fps", "proxyless-w0.3"}) {
            QVERIFY(panel.selectModel(QString::fromLatin1(model)));
            for (const PublishedScheme& p : publishedSchemesFor(model)) {
                QVERIFY(panel.loadPublishedScheme(QString::fromStdString(p.name)));
                const std::int64_t expected = publishedTotal(ref, model, p.name);
                QVERIFY2(expected > 0, p.id().c_str());
                QCOMPARE(panel.layerModel()->ledger().extra.total(), expected);
                QCOMPARE(panel.layerModel()->schemeDescription(), QString::fromStdString(p.id()));
                ++checked;
            }
        }
        QCOMPARE(checked, 16);
    }

    void schemeFilesRoundTripAndBadOnesSayWhy()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.selectModel(QStringLiteral("proxyless-w0.3"));
        TrainingLayerModel* m = panel.layerModel();
        panel.applyBiasOnly(10);
        setRatio(m, 57, 0.5);
        setRatio(m, 54, 0.25);
        const ResolvedScheme edited = m->scheme();
        for (const char* name : {"s.json", "s.yaml"}) {
            panel.saveSchemeFile(path(name));
            panel.resetScheme();
            QVERIFY(!sameUpdates(m->scheme(), edited));
            panel.loadSchemeFile(path(name));
            QVERIFY2(sameUpdates(m->scheme(), edited), name);
        }
        const SparseScheme onDisk = SparseScheme::loadFile(path("s.yaml").toStdString());
        QCOMPARE(onDisk.n_bias_update, 10);
        QCOMPARE(onDisk.manual_weight_idx, (std::vector<int>{54, 57}));
        QCOMPARE(onDisk.weight_update_ratio, (std::vector<double>{0.25, 0.5}));

        // A choice tiny-training's keys cannot express is not saved, and the panel says why.
        toggleBias(m, 52, false);
        QVERIFY2(panel.bannerText().contains(QStringLiteral("Not a tiny-training config")), qPrintable(panel.bannerText()));
        QString e = inputErrorOf([&] { panel.saveSchemeFile(path("bad.json")); });
        QVERIFY2(e.contains(QStringLiteral("the bias of conv 50 is updated but not of conv 52")), qPrintable(e));
        QVERIFY(!QFile::exists(path("bad.json")));
        // A bad file names itself and the entry; the scheme stays as it was.
        const ResolvedScheme before = m->scheme();
        QFile f(path("broken.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"backward_config": {"n_bias_update": 5, "manual_weight_idx": [40], "weight_update_ratio": [0.5]}})");
        f.close();
        e = inputErrorOf([&] { panel.loadSchemeFile(path("broken.json")); });
        QVERIFY2(e.contains(QStringLiteral("broken.json")) && e.contains(QStringLiteral("manual_weight_idx[0] = 40")), qPrintable(e));
        QVERIFY(sameUpdates(m->scheme(), before));
    }

    void ledgerCsvHoldsTheLedgersIntegers()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.selectModel(QStringLiteral("mcunet-5fps"));
        panel.loadPublishedScheme(QStringLiteral("49kb"));
        panel.exportLedgerCsv(path("ledger.csv"));
        QFile f(path("ledger.csv"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines[1], QStringLiteral("# scheme mcunet-5fps/49kb"));
        QCOMPARE(lines[2], QStringLiteral("# extra_bytes 50944, extra_bits 407552"));
        QVERIFY(lines[3].contains(QStringLiteral("inference_peak_bytes 163840")));
        QVERIFY(lines[4].startsWith(QStringLiteral("index,layer,role,bias,weight_ratio,k,cin")));
        QCOMPARE(lines.size(), 5 + 43 + 1);
        QCOMPARE(lines[5 + 27], QStringLiteral("27,blocks.9.pw1,pw1,1,1/2,24,48,12288,1536,768,1536,4608,0,8448,"));
        QCOMPARE(lines.last(), QStringLiteral("total,,,,,,,131840,16480,18368,3840,12096,160,50944,"));
        QCOMPARE(QDir(tmp.path()).entryList(QStringList{QStringLiteral("*.tmp*")}, QDir::Files).size(), 0);
    }

    void graphExportsWriteDotSvgAndPng()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.selectModel(QStringLiteral("ds-cnn-s"));
        panel.applyBiasOnly(2);
        TrainingGraphPane* pane = panel.graphPane();
        QVERIFY(panel.waitForGraph(300000));
        const TrainingGraph& g = pane->graph();
        pane->exportGraph(path("g.svg"), QStringLiteral("ds-cnn-s test"));
        QVERIFY(pane->waitForExport(300000));
        pane->exportGraph(path("g.png"), QStringLiteral("ds-cnn-s test"));
        QVERIFY(pane->waitForExport(300000));
        TrainingGraphPane::writeGraphFile(g, path("g.dot").toStdString(), "ds-cnn-s test");
        QFile svg(path("g.svg")), png(path("g.png")), dot(path("g.dot"));
        QVERIFY(svg.open(QIODevice::ReadOnly) && png.open(QIODevice::ReadOnly) && dot.open(QIODevice::ReadOnly));
        const QByteArray s = svg.readAll(), p = png.readAll(), d = dot.readAll();
        QVERIFY(s.contains("<svg") && s.contains("ds&#45;cnn&#45;s test") && s.contains("<title>nn.mcuconv2d#0</title>"));
        QCOMPARE(s.count("class=\"node\""), qsizetype(g.ops.size() + 5));   // every op + the legend
        QVERIFY(p.startsWith("\x89PNG\r\n"));
        QVERIFY(QImage::fromData(p).width() > 100);
        QVERIFY(d.startsWith("digraph training_graph {") && d.contains("\"nn.mcuconv2d#0\""));
        QVERIFY(d.contains("pruned by the scheme"));
        const QString e = inputErrorOf([&] { TrainingGraphPane::writeGraphFile(g, path("g.bmp").toStdString(), "x"); });
        QVERIFY2(e.contains(QStringLiteral("unknown drawing format '.bmp'")), qPrintable(e));
    }

    void rowsTinyEngineCannotCompileAreFlagged()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.selectModel(QStringLiteral("mbv2-w0.35"));
        panel.loadPublishedScheme(QStringLiteral("49kb"));
        TrainingLayerModel* m = panel.layerModel();
        const Network net = zooModel("mbv2-w0.35");
        // Conv 49 is depthwise (weight update: NotImplementedError); 42, 45 and 48 update 7 of 56
        // input channels while back-propagation continues through them (needs k % 4 == 0).
        QVERIFY(net.conv(49).depthwise());
        QList<int> flagged;
        for (int row = 0; row < m->rowCount(); ++row) {
            const QString mark = m->data(m->index(row, TrainingLayerModel::Warning)).toString();
            const QString tip = m->data(m->index(row, TrainingLayerModel::Warning), Qt::ToolTipRole).toString();
            if (mark == QStringLiteral("⚠")) flagged << row;
            if (row == 49) QVERIFY2(tip.contains(QStringLiteral("depthwise weight update")), qPrintable(tip));
            if (row == 42) QVERIFY2(tip.contains(QStringLiteral("k % 4 == 0 (k = 7)")), qPrintable(tip));
        }
        QCOMPARE(flagged, (QList<int>{42, 45, 48, 49}));
        QCOMPARE(m->scheme().conv(42).k, 7);
        QVERIFY2(panel.bannerText().contains(QStringLiteral("cannot compile the choice on 4 rows")), qPrintable(panel.bannerText()));
        // MIT's demo scheme compiles: nothing flagged.
        panel.selectModel(QStringLiteral("mcunet-5fps"));
        panel.loadPublishedScheme(QStringLiteral("49kb"));
        QVERIFY2(panel.bannerText().isEmpty(), qPrintable(panel.bannerText()));
    }

    void aModelWithoutInt8LoweringIsReadOnly()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.modelNames().contains(QStringLiteral("cct-2/3x2")));
        panel.selectModel(QStringLiteral("cct-2/3x2"));
        TrainingLayerModel* m = panel.layerModel();
        QVERIFY(m->rowCount() > 0);
        QVERIFY(!m->hasLedger());
        QVERIFY(!(m->flags(m->index(0, TrainingLayerModel::Bias)) & Qt::ItemIsUserCheckable));
        QVERIFY(!toggleBias(m, 0, true));
        QVERIFY2(panel.bannerText().contains(QStringLiteral("No training graph")), qPrintable(panel.bannerText()));
        QVERIFY(!panel.graphPane()->hasGraph());
        QVERIFY2(panel.graphPane()->view()->overlayText().contains(QStringLiteral("no int8 training graph")),
                 qPrintable(panel.graphPane()->view()->overlayText()));
    }

    void theDesignSpaceSubnetFollowsTheSelection()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.modelNames().contains(QStringLiteral("subnet")));
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        const SubnetConfig min = ArchSampler(state.space()).minConfig(state.space().resolutions.front());
        state.setSubnet(min);
        const Network net = networkFromSubnet(state.space(), min);
        TrainingLayerModel* m = panel.layerModel();
        QCOMPARE(m->rowCount(), net.numConvs());
        QCOMPARE(m->network().params(), net.params());
        // Design-space subnets have squeeze-excite gates TinyEngine lacks, and 2 classes.
        QVERIFY2(panel.bannerText().contains(QStringLiteral("squeeze-excite")), qPrintable(panel.bannerText()));
        panel.applyBiasOnly(5);
        compareLedgers(m->ledger(), TrainingMemoryModel(net).ledger(SparseScheme::biasOnly(5).resolve(net)));
    }

    // Issue 19: the panel compared the entry's key ("subnet") with its display name, so the
    // design-space subnet went out as zoo model "subnet" and every export failed ("unknown zoo model").
    void theDesignSpaceSubnetIsExportedFromItsSupernet()
    {
        if (findModelFile("supernets/mcunet-fmnist.pth").empty()) QSKIP("the shipped demo supernet is absent");
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        panel.applyBiasOnly(5);
        ExportRequest rq = panel.exportRequest();
        const SubnetSource* subnet = rq.model.asSubnet();
        QVERIFY(subnet && fileExists(subnet->checkpoint));
        QCOMPARE(subnet->space.name, std::string("mcunet-fmnist"));
        QCOMPARE(rq.name, std::string("subnet"));   // the workspace's own supernet: no transfer
        // Issues 47, 49: the subnet and the scheme go as values (no temporary subnet.json or
        // scheme.json to parse back), the scheme with its words.
        QVERIFY2(subnet->config_name.empty(), subnet->config_name.c_str());
        QVERIFY(subnet->config == state.subnet());
        QCOMPARE(rq.scheme, sparseSchemeOf(panel.layerModel()->scheme(), panel.layerModel()->network()));
        QCOMPARE(rq.scheme_label, panel.layerModel()->schemeDescription().toStdString());
        QVERIFY2(rq.scheme_label.find("tinyscope-") == std::string::npos && !rq.scheme_label.empty(), rq.scheme_label.c_str());
        // In Lab 3's VWW workspace (no supernet) the shipped one is used, and the export says so.
        state.setWorkspace(shippedWorkspace("lab3-vww"));
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        panel.applyBiasOnly(5);
        QCOMPARE(panel.exportRequest().name, std::string("subnet-transferred-to-mcunet-fmnist"));
        state.setWorkspace(shippedWorkspace("fashion-mnist"));
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        panel.applyBiasOnly(5);
        rq = panel.exportRequest();
        // And the export is planned: the subnet's int8 graph with the chosen scheme.
        rq.quantize.bn_images = 50;
        rq.quantize.calib_images = 20;
        const ExportPlan plan = planModelExport(rq);
        QVERIFY(!plan.graph.ops.empty());
    }

    // Issue 19: after File → Open training graph the picker kept naming the previous model (and
    // Export took that model). Now it names the zoo model the graph's network is.
    void thePickerNamesTheOpenedGraphsModel()
    {
        REQUIRE_SHARED();
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        const QString graph = QString::fromStdString(test::sharedPath("reference/tinyengine/49kb-int8-graph.json"));
        const ImportedGraph im = openTrainingGraph(graph);
        panel.showImportedGraph(im);
        QCOMPARE(panel.currentModel(), QStringLiteral("mcunet-5fps"));
        QCOMPARE(panel.layerModel()->network().numConvs(), im.network.numConvs());   // the opened graph stays shown
        const ExportRequest rq = panel.exportRequest();
        QVERIFY(rq.model.asZoo());
        QCOMPARE(rq.model.asZoo()->network.name, std::string("mcunet-5fps"));
        QVERIFY(!companionParams(graph).isEmpty());
        QCOMPARE(QString::fromStdString(rq.model.asZoo()->params_file), companionParams(graph));
        QVERIFY(rq.model.asZoo()->params);   // read and checked against the model when the request is made
    }

    void anyTrainingGraphCanBeShownAndInspected()
    {
        // A graph that does not come from the picker (as File → Open training graph will give).
        NetworkBuilder b("hand", {4, 8, 8});
        int x = b.conv(-1, ConvSpec::of("pw", "pw1", "v0", 0, 8, 1, 1, 1, Activation::ReLU).withBias());
        x = b.globalAvgPool(x, "pool");
        b.conv(x, ConvSpec::of("fc", "classifier", "v1", -1, 10).asLinear());
        auto net = std::make_shared<Network>(b.finish(10, LossKind::CrossEntropy, "hand", "tests"));
        const ResolvedScheme scheme = SparseScheme::biasOnly(1).resolve(*net);
        TrainingGraph g = buildTrainingGraph(*net, scheme);
        const int ops = static_cast<int>(g.ops.size());

        AppState state;
        TrainingInspectorPanel panel(&state);
        panel.showTrainingGraph(g, QStringLiteral("hand.json"));
        QVERIFY(panel.waitForGraph(120000));
        TrainingGraphPane* pane = panel.graphPane();
        QCOMPARE(pane->view()->nodeNames().size(), ops);
        QCOMPARE(panel.layerModel()->rowCount(), 0);   // no network given: no layer table
        QVERIFY(pane->find(QStringLiteral("v0_bias")));
        const int op = pane->selectedOp();
        QVERIFY(op >= 0);
        const QString html = pane->inspector()->toPlainText();
        QVERIFY2(html.contains(QStringLiteral("v0_bias")), qPrintable(html));
        QVERIFY2(html.contains(QStringLiteral("inputs")) && html.contains(QStringLiteral("bytes")), qPrintable(html));

        // The forward conv: its attributes and tensors with shape, dtype and bytes.
        QVERIFY(pane->selectOp(0));
        const QString conv = pane->inspector()->toPlainText();
        for (const char* needle : {"nn.mcuconv2d", "kernel_layout", "\"OIHW\"", "[1,4,8,8]", "int8", "v0_weight", "[8,4,1,1]", "32",
                                   "int32", "[1,8,8,8]", "2,048"})
            QVERIFY2(conv.contains(QString::fromUtf8(needle)), qPrintable(QStringLiteral("%1 missing in\n%2").arg(QLatin1String(needle), conv)));

        // With its network and scheme, the ledger follows the shown graph.
        panel.showTrainingGraph(g, QStringLiteral("hand.json"), net, &scheme);
        QCOMPARE(panel.layerModel()->rowCount(), 2);
        compareLedgers(panel.layerModel()->ledger(), TrainingMemoryModel(*net).ledger(scheme));
        QVERIFY(panel.waitForGraph(120000));
        QCOMPARE(int(pane->graph().ops.size()), ops);
    }

    // Issue 19: in a 1280×720 window (also 1920×1080 at 150 %: the same 1280×720 logical pixels)
    // the bias and weight columns were scrolled out of the table's view and the memory chart's
    // legend was cut ("inference p…", "budget 256…").
    void theKeyColumnsAndTheLegendFitA1280x720Window()
    {
        MainWindow w;
        TrainingInspectorPanel* panel = showMitDemo(w, QSize(1280, 720));
        QVERIFY(panel);
        QCOMPARE(w.size(), QSize(1280, 720));
        QTableView* table = panel->table();
        const QHeaderView* h = table->horizontalHeader();
        QCOMPARE(table->horizontalScrollBar()->value(), 0);
        for (int c : {TrainingLayerModel::Layer, TrainingLayerModel::Bias, TrainingLayerModel::Weight, TrainingLayerModel::Extra}) {
            const int x = h->sectionViewportPosition(c);
            QVERIFY2(x >= 0 && x + h->sectionSize(c) <= table->viewport()->width(),
                     qPrintable(QStringLiteral("column %1 at %2..%3, viewport %4 px wide")
                                    .arg(panel->layerModel()->headerData(c, Qt::Horizontal).toString())
                                    .arg(x)
                                    .arg(x + h->sectionSize(c))
                                    .arg(table->viewport()->width())));
        }
        // The layer's whole name is a hover away when it is elided.
        const QModelIndex name = panel->layerModel()->index(24, TrainingLayerModel::Layer);
        QCOMPARE(name.data(Qt::ToolTipRole).toString(), name.data(Qt::DisplayRole).toString());
        // Every legend entry of the memory chart is shown whole, inside the panel.
        ChartLegend* legend = nullptr;   // the memory chart's: the Fine-tune tab's charts are in a hidden tab
        for (ChartLegend* l : panel->findChildren<ChartLegend*>())
            if (l->isVisible()) legend = l;
        QVERIFY2(legend, "the memory chart has no wrapping legend");
        QCOMPARE(legend->texts(), (QStringList{QStringLiteral("masks"), QStringLiteral("biases"), QStringLiteral("saved inputs"),
                                               QStringLiteral("weights"), QStringLiteral("inference peak + extra from here on (right axis, KB in all)"),
                                               QStringLiteral("SRAM budget %1 KB (right axis, KB in all)").arg(panel->budgetKB(), 0, 'f', 0)}));
        const QRect inside = panel->rect();
        for (QLabel* l : legend->labels()) {
            QVERIFY2(l->isVisible() && l->width() >= l->sizeHint().width(), qPrintable(l->text()));
            const QRect r(l->mapTo(panel, QPoint(0, 0)), l->size());
            QVERIFY2(inside.contains(r), qPrintable(l->text()));
        }
    }

    void thePanelRendersWithItsGraph()
    {
        MainWindow w;
        TrainingInspectorPanel* panel = showMitDemo(w, QSize(1600, 1000));
        QVERIFY(panel);
        const QImage shot = w.grab().toImage();
        QVERIFY(shot.width() >= 1200 && shot.height() >= 800);
        QVERIFY2(test::distinctColours(shot, 5) > 40, qPrintable(QString::number(test::distinctColours(shot, 5))));
        // The graph area itself is drawn (not blank): kept ops in colour, pruned ones grey.
        const QImage graph = panel->graphPane()->view()->viewport()->grab().toImage();
        QVERIFY2(test::distinctColours(graph, 5) > 8, qPrintable(QString::number(test::distinctColours(graph, 5))));
        bool listed = false;
        for (const auto& p : w.panels()) listed = listed || (p.stem == QStringLiteral("training-inspector") && p.widget == panel);
        QVERIFY(listed);   // rendered by the screenshot tool (tests/screenshots)
    }
};

QTEST_MAIN(TestTrainingInspector)
#include "test_training_inspector.moc"
