// The Training inspector's Fine-tune tab (issue 20), offscreen, on real runs of the simulator with
// tiny settings: the design-space subnet of the Fashion-MNIST workspace (its shipped supernet; no
// ../shared files), 28–36 px images, a batch of 16. A run fills the curve with one point per epoch
// while it runs and adds its point to the scatter with the run's own extra memory, which is the
// ledger's for the same scheme; Cancel leaves a checkpoint that the next run resumes; a scheme or
// model change marks the curve stale; a zoo model without int8 weights is said to be seeded; the
// learning rate follows QAS until edited; bad data ends with the core's message; "find the best
// scheme under the budget" applies the knapsack's choice over the measured contributions as one
// undoable step, within budget − inference peak, and refuses a budget below the least.
#include "TestSupport.h"

#include "AppState.h"
#include "ChartStyle.h"
#include "FineTuneCurve.h"
#include "FineTuneForm.h"
#include "FineTunePane.h"
#include "JobRunner.h"
#include "SchemeAccuracyScatter.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"

#include "data/ImageDataset.h"
#include "graph/MemoryLedger.h"
#include "graph/SchemeEdit.h"
#include "graph/SchemeKnapsack.h"

#include <QFileInfo>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtCharts/QValueAxis>

#include <cmath>

using namespace tinyscope;
using namespace tinyscope::ui;

class TestFineTunePane : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

    // The panel on the design-space subnet, its Fine-tune tab set to a tiny run.
    static FineTunePane* tinySubnetRun(TrainingInspectorPanel& panel, int epochs, int trainImages)
    {
        if (!panel.selectModel(TrainingInspectorPanel::subnetEntryName())) return nullptr;
        FineTunePane* ft = panel.fineTunePane();
        FineTuneRecipe r;
        r.batch = 16;
        ft->setBaseRecipe(r);
        QuantizeOptions q;
        q.bn_images = 200;   // BatchNorm re-calibration of the subnet: enough for a test
        q.calib_images = 50;
        ft->setQuantizeOptions(q);
        ft->form()->setEpochs(epochs);
        ft->form()->setImages(trainImages, 50);
        return ft;
    }

    QString runsRoot() const { return tmp.path() + QStringLiteral("/state/tinyscope/finetune"); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(tmp.isValid());
        qputenv("XDG_STATE_HOME", (tmp.path() + QStringLiteral("/state")).toLocal8Bit());   // runs go here, not to the user's
    }

    void theTabSitsBesideTheGraphAndTheLrFollowsQas()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QTabWidget* tabs = panel.rightTabs();
        QCOMPARE(tabs->count(), 3);
        QCOMPARE(tabs->tabText(0), QStringLiteral("Training graph"));
        QCOMPARE(tabs->tabText(1), QStringLiteral("Fine-tune"));
        QCOMPARE(tabs->tabText(2), QStringLiteral("Compare schemes"));
        QCOMPARE(tabs->widget(1), static_cast<QWidget*>(panel.fineTunePane()));
        FineTuneForm* f = panel.fineTunePane()->form();
        const FineTuneRecipe r = f->recipe({});
        QCOMPARE(r.epochs, 3);
        QCOMPARE(r.train_images, std::size_t(2000));
        QCOMPARE(r.test_images, std::size_t(1000));
        QVERIFY(r.qas);
        QCOMPARE(r.bs256_lr, 0.075);
        QCOMPARE(f->data(), QStringLiteral("fashion-mnist"));
        f->setQas(false);
        QCOMPARE(f->lr(), 0.1);   // tiny-training's rate without QAS
        f->setQas(true);
        QCOMPARE(f->lr(), 0.075);
        f->setLr(0.05);
        f->setQas(false);
        QCOMPARE(f->lr(), 0.05);   // edited: no longer follows
        QVERIFY(!f->recipe({}).qas);
    }

    void theRecipeTakesTheModelsInputSize()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.selectModel(QStringLiteral("mcunet-5fps")));
        QCOMPARE(panel.fineTunePane()->request().recipe.resolution, 128);
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        const FineTuneRequest rq = panel.fineTunePane()->request();
        QCOMPARE(rq.recipe.resolution, state.subnet().image_size);
        QVERIFY(rq.recipe.resolution >= 28 && rq.recipe.resolution <= 36);
        QVERIFY(rq.model.asSubnet() && rq.model.asSubnet()->config == state.subnet());   // the subnet itself, as a value
        QVERIFY(QFileInfo::exists(QString::fromStdString(rq.scheme_name)));   // the run's scheme, kept in its folder
        QCOMPARE(QFileInfo(QString::fromStdString(rq.scheme_name)).absolutePath(), QString::fromStdString(rq.out));
        QCOMPARE(SparseScheme::loadFile(rq.scheme_name), rq.scheme);
        // Another scheme, QAS or recipe: another folder (its checkpoint never meets this run's).
        panel.applyBiasOnly(1);
        QVERIFY(panel.fineTunePane()->request().out != rq.out);
        panel.layerModel()->undoStack()->undo();
        QCOMPARE(panel.fineTunePane()->request().out, rq.out);
        panel.fineTunePane()->form()->setQas(false);
        const QString noQas = QString::fromStdString(panel.fineTunePane()->request().out);
        QVERIFY(noQas.contains(QStringLiteral("/subnet-noqas-")));
    }

    void aZooModelWithoutWeightsIsSaidToBeSeeded()
    {
        AppState state;
        TrainingInspectorPanel panel(&state);
        QVERIFY(panel.selectModel(QStringLiteral("mcunet-5fps")));
        const QString w = panel.fineTunePane()->warningText();
        QVERIFY2(w.contains(QStringLiteral("seeded")) && w.contains(QStringLiteral("Use int8 weights")), qPrintable(w));
        panel.setModelWeights(QStringLiteral("mcunet-5fps"), tmp.path() + QStringLiteral("/some-params.pkl"));
        QVERIFY(panel.fineTunePane()->warningText().isEmpty());
        QVERIFY(panel.selectModel(TrainingInspectorPanel::subnetEntryName()));
        QVERIFY(panel.fineTunePane()->warningText().isEmpty());   // PTQ of the supernet: real weights
    }

    void badDataEndsWithTheCoresMessage()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        AppState state;
        TrainingInspectorPanel panel(&state);
        FineTunePane* ft = tinySubnetRun(panel, 1, 64);
        QVERIFY(ft);
        const QString missing = tmp.path() + QStringLiteral("/no-such-folder");
        ft->form()->setData(missing);
        QVERIFY(ft->start());
        QVERIFY(ft->waitForIdle(300000));
        QVERIFY2(ft->statusText().contains(missing), qPrintable(ft->statusText()));
        QCOMPARE(ft->scatter()->points(), 0);
    }

    void aRunFillsTheCurveLiveAndAddsItsPointToTheScatter()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        AppState state;
        TrainingInspectorPanel panel(&state);
        FineTunePane* ft = tinySubnetRun(panel, 2, 32);
        QVERIFY(ft);
        // While epoch 2 trains, epoch 1's point is already on the curve. From the first training
        // step on, the curve has its epoch-0 point (top-1 before any step) and, before epoch 1
        // ends, the running loss of its steps at fractional epochs (issue 47).
        int pointsDuringEpoch2 = -1;
        bool initialAtFirstStep = false;
        QList<QPointF> stepsInEpoch1;
        int epochsWhenEpoch1Trained = -1;
        connect(ft->runner(), &JobRunner::progress, this, [&](qint64 done, qint64 total, const QString& stage) {
            if (stage.startsWith(QStringLiteral("epoch 1/2")) && done == 1) initialAtFirstStep = ft->curve()->hasInitialPoint();
            if (stage.startsWith(QStringLiteral("epoch 1/2")) && done == total) {
                stepsInEpoch1 = ft->curve()->batchPoints();
                epochsWhenEpoch1Trained = ft->curve()->points();
            }
            if (stage.startsWith(QStringLiteral("epoch 2/2")) && pointsDuringEpoch2 < 0) pointsDuringEpoch2 = ft->curve()->points();
        });
        QVERIFY(ft->start());
        QVERIFY(ft->waitForIdle(300000));
        QVERIFY2(ft->statusText().contains(QStringLiteral("top-1")), qPrintable(ft->statusText()));
        QVERIFY(initialAtFirstStep);
        QCOMPARE(epochsWhenEpoch1Trained, 0);   // epoch 1 not evaluated yet …
        QCOMPARE(stepsInEpoch1.size(), 2);       // … but both its steps (32 images, batch 16) are drawn
        QCOMPARE(stepsInEpoch1[0].x(), 0.5);
        QCOMPARE(stepsInEpoch1[1].x(), 1.0);
        QVERIFY(stepsInEpoch1[0].y() > 0);
        QCOMPARE(tickLabels(ft->curve()->epochAxis()), (QStringList{"0", "1", "2"}));
        QCOMPARE(pointsDuringEpoch2, 1);
        QCOMPARE(ft->curve()->points(), 2);
        // Epoch 1's running loss at its last step is the epoch's mean loss.
        QCOMPARE(stepsInEpoch1[1].y(), ft->curve()->epochs()[0].loss);
        QVERIFY(ft->curve()->hasInitialPoint());
        QVERIFY(ft->curve()->initialTop1() >= 0 && ft->curve()->initialTop1() <= 100);
        QCOMPARE(ft->curve()->epochs()[0].epoch, 1);
        QCOMPARE(ft->curve()->epochs()[1].epoch, 2);
        for (const FineTuneEpoch& e : ft->curve()->epochs()) QVERIFY(e.top1 >= 0 && e.top1 <= 100 && e.loss > 0);
        QVERIFY(!ft->curve()->stale());

        // The scatter's point: the run's extra memory, which is the ledger's for this scheme.
        const std::vector<SchemeRun> shown = ft->scatter()->shownRuns();
        QCOMPARE(int(shown.size()), 1);
        const MemoryLedger& ledger = panel.layerModel()->ledger();
        QCOMPARE(shown[0].extra_bytes, ledger.extra.total());
        QCOMPARE(shown[0].inference_peak_bytes, ledger.inference_peak_bytes);
        QCOMPARE(shown[0].total_bytes, ledger.extra.total() + ledger.inference_peak_bytes);
        QCOMPARE(shown[0].scheme, panel.layerModel()->schemeDescription());
        QCOMPARE(shown[0].top1, ft->curve()->epochs().back().top1);
        QVERIFY(shown[0].qas);
        QVERIFY(QFileInfo::exists(shown[0].run + QStringLiteral("/result.json")));
        QVERIFY(shown[0].run.startsWith(runsRoot()));
        // The budget is on inference + extra: on the extra-memory axis it sits at budget − inference.
        panel.setBudgetKB(100);
        QCOMPARE(ft->scatter()->budgetLineKB(), 100 - static_cast<double>(ledger.inference_peak_bytes) / 1024.0);
        QCOMPARE(int(ft->scatter()->front().size()), 1);

        // A scheme change marks the curve stale; undoing it makes it current again.
        panel.applyBiasOnly(1);
        QVERIFY(ft->curve()->stale());
        QVERIFY2(ft->curve()->titleText().startsWith(QStringLiteral("Stale")), qPrintable(ft->curve()->titleText()));
        QCOMPARE(ft->curve()->points(), 2);   // kept, but marked
        panel.layerModel()->undoStack()->undo();
        QVERIFY(!ft->curve()->stale());
        // Another model: stale, and the scatter shows that model's runs (none yet).
        QVERIFY(panel.selectModel(QStringLiteral("mcunet-5fps")));
        QVERIFY(ft->curve()->stale());
        QVERIFY(ft->curve()->titleText().contains(QStringLiteral("another model")));
        QCOMPARE(ft->scatter()->points(), 0);
        QVERIFY(ft->scatter()->titleText().contains(QStringLiteral("1 more of other models")));
    }

    void cancelLeavesACheckpointThatTheNextRunResumes()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        AppState state;
        TrainingInspectorPanel panel(&state);
        FineTunePane* ft = tinySubnetRun(panel, 2, 64);
        QVERIFY(ft);
        panel.applyBiasOnly(2);   // not the previous test's run
        bool asked = false;
        auto cancelInEpoch2 = connect(ft->runner(), &JobRunner::progress, this, [&](qint64 done, qint64, const QString& stage) {
            if (!asked && stage.startsWith(QStringLiteral("epoch 2/2")) && done >= 2) {
                asked = true;
                ft->cancel();
            }
        });
        QVERIFY(ft->start());
        const QString folder = QString::fromStdString(ft->request().out);
        QVERIFY(ft->waitForIdle(300000));
        disconnect(cancelInEpoch2);
        QVERIFY(asked);
        QVERIFY2(ft->statusText().contains(QStringLiteral("resumes it")), qPrintable(ft->statusText()));
        QVERIFY(QFileInfo::exists(folder + QStringLiteral("/finetune-state.json")));
        QVERIFY(!QFileInfo::exists(folder + QStringLiteral("/result.json")));
        QCOMPARE(ft->curve()->points(), 1);   // epoch 1 finished before the cancel
        QCOMPARE(ft->scatter()->points(), 0);

        QVERIFY(ft->start());
        QVERIFY2(ft->statusText().startsWith(QStringLiteral("Resuming")), qPrintable(ft->statusText()));
        QCOMPARE(ft->curve()->points(), 1);   // the same run: its first epoch stays on the curve
        QVERIFY(ft->waitForIdle(300000));
        QVERIFY2(ft->statusText().startsWith(QStringLiteral("Resumed from the checkpoint")), qPrintable(ft->statusText()));
        QCOMPARE(ft->curve()->points(), 2);
        QCOMPARE(ft->scatter()->points(), 1);
        QVERIFY(QFileInfo::exists(folder + QStringLiteral("/result.json")));
    }

    void theBestSchemeUnderTheBudgetIsAppliedAsOneUndoableStep()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        AppState state;
        TrainingInspectorPanel panel(&state);
        FineTunePane* ft = tinySubnetRun(panel, 1, 32);
        QVERIFY(ft);
        ContributionOptions o;   // a tiny analysis: the classifier, bias tail 2, the last 2 convs' weights at 1/2
        o.tails = {2};
        o.window = 2;
        o.ratios = {0.5};
        ft->setAnalysisOptions(o);
        const Network& net = panel.layerModel()->network();
        const MemoryLedger start = panel.layerModel()->ledger();
        // A budget below the least any scheme needs (the classifier only) is refused before any run.
        panel.setBudgetKB(1);
        QVERIFY(!ft->findBestScheme());
        QVERIFY2(ft->statusText().contains(QStringLiteral("inference peak")), qPrintable(ft->statusText()));
        // Room for bias tail 2 and a little more.
        const std::int64_t tail2 = TrainingMemoryModel(net).ledger(SparseScheme::biasOnly(2).resolve(net)).extra.total();
        const double budgetKB = std::ceil(static_cast<double>(start.inference_peak_bytes + tail2) / 1024.0) + 1;
        panel.setBudgetKB(budgetKB);
        QUndoStack* undo = panel.layerModel()->undoStack();
        const int steps = undo->count();
        const QString before = panel.layerModel()->schemeDescription();
        QVERIFY(ft->findBestScheme());
        QVERIFY(ft->waitForIdle(300000));
        QVERIFY2(ft->statusText().startsWith(QStringLiteral("Found under")), qPrintable(ft->statusText()));
        QVERIFY(ft->lastAnalysis());
        QVERIFY(ft->lastAnalysis()->contributions.bias_tail.count(2) == 1);
        const std::int64_t extraBudget = static_cast<std::int64_t>(budgetKB * 1024) - start.inference_peak_bytes;
        const KnapsackChoice best = bestSchemeUnderBudget(net, ft->lastAnalysis()->contributions, extraBudget);
        QCOMPARE(panel.layerModel()->schemeDescription(), QString::fromStdString(describeScheme(best.resolved, net)));
        QVERIFY(panel.layerModel()->ledger().extra.total() <= extraBudget);
        QCOMPARE(panel.layerModel()->ledger().extra.total(), best.extra_bytes);
        QCOMPARE(undo->count(), steps + 1);
        undo->undo();
        QCOMPARE(panel.layerModel()->schemeDescription(), before);
    }
};

QTEST_MAIN(TestFineTunePane)
#include "test_finetune_pane.moc"
