#include "Screenshots.h"

#include "AppState.h"
#include "CompressPanel.h"
#include "DeployDialog.h"
#include "DesignSpacePanel.h"
#include "EvaluationBox.h"
#include "EvaluationOptions.h"
#include "ExportDialog.h"
#include "FineTuneForm.h"
#include "FineTunePane.h"
#include "MainWindow.h"
#include "PredictorPanel.h"
#include "SearchPanel.h"
#include "SearchPlayback.h"
#include "SvgGraphView.h"
#include "TrainingGraphFile.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"

#include "data/ImageDataset.h"
#include "graph/TrainingGraph.h"
#include "io/DataPaths.h"
#include "space/SpacePresets.h"

#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <cmath>
#include <functional>
#include <iostream>

namespace tinyscope::screenshots {

using namespace tinyscope::ui;

namespace {

bool saveGrab(QWidget* w, const QString& path)
{
    // A resize or a refreshed legend posts layout requests that post more (FlowLayout's rows): let
    // them settle, as a user's event loop would, before the grab.
    for (int i = 0; i < 3; ++i) {
        QApplication::processEvents();
        QApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    return w->grab().save(path);
}

// Starts a job and waits (with the event loop running) for the panel's `done` signal.
template <class Panel, class Signal>
bool runAndWait(Panel* panel, Signal done, const std::function<void()>& start, int timeoutMs)
{
    QEventLoop loop;
    bool ok = false;
    QObject::connect(panel, done, &loop, [&](bool success) {
        ok = success;
        loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    start();
    loop.exec();
    return ok;
}

// The Predictor and Search panels are shown after a run: the shipped predictor evaluated on its
// dataset (when ../shared is at hand), and two recorded searches kept in `historyPath` (not in
// the user's history).
void prepareSearchPanels(MainWindow& window, const QString& historyPath)
{
    PredictorPanel* pred = window.predictorPanel();
    if (pred->predictor() && !pred->datasetPath().isEmpty() && QFileInfo::exists(pred->datasetPath()))
        runAndWait(pred, &PredictorPanel::jobFinished, [pred] { pred->startEvaluation(); }, 120000);
    SearchPanel* search = window.searchPanel();
    QFile::remove(historyPath);
    search->setHistoryPath(historyPath);
    SearchOptions o = search->options();
    o.seed = 1;
    o.algorithm = "random";
    search->setOptions(o);
    runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(true); }, 120000);
    o.algorithm = "evolution";
    search->setOptions(o);
    runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(true); }, 120000);
}

// Search playback (issue 22) of the evolution run prepareSearchPanels made (population 50, 20
// generations): generations 0, 10 and 20 on the Pareto chart, at the window's size and as on a
// 1280×720 screen (search-playback-g<N>[-1280x720].png); the playback is left at the last generation.
int grabPlayback(MainWindow& window, const QString& base)
{
    SearchPanel* search = window.searchPanel();
    window.tabs()->setCurrentWidget(search);
    int written = 0;
    const QSize full = window.size();
    for (const QString& suffix : {QString(), QStringLiteral("-1280x720")}) {
        if (!suffix.isEmpty()) window.resize(1280, 720);
        for (int g : {0, 10, 20}) {
            search->playback()->setGeneration(g);
            written += saveGrab(&window, base + QStringLiteral("search-playback-g%1%2.png").arg(g).arg(suffix));
        }
    }
    window.resize(full);
    search->playback()->setGeneration(search->playback()->slider()->maximum());
    QApplication::processEvents();
    return written;
}

// The inspector on MIT's demo: mcunet-5fps with the published "49kb" scheme, graph laid out, the
// side panel on a gradient output (the partial weight gradient of conv 24, 12 of 48 channels), the
// whole graph in view (kept ops in colour, pruned ones grey). Returns that output's op.
int prepareInspector(MainWindow& window)
{
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    ti->selectModel(QStringLiteral("mcunet-5fps"));
    ti->loadPublishedScheme(QStringLiteral("49kb"));
    if (!ti->waitForGraph(120000)) std::cerr << "tinyscope-screenshots: the training graph was still laying out after 120 s\n";
    const TrainingGraph& g = ti->graphPane()->graph();
    int leaf = -1;
    for (const GraphOutput& o : g.outputs)
        if (o.info == "v9_conv_0_weight") leaf = g.tensor(o.tensor).producer;
    ti->graphPane()->selectOp(leaf);
    ti->graphPane()->view()->fitAll();
    return leaf;
}

// The graph's "kept ops only" view (issue 22) of mcunet-5fps under the published 49kb scheme, then
// under bias-only:12 (the graph shrinks; the ops the edit kept or added are outlined), each framed
// on the loss and the gradient outputs as the pane frames a new view, at the window's size and at
// 1280×720; then the collapsed kept view of 49kb. The pane is left on the whole graph and 49kb.
int grabKeptViews(MainWindow& window, const QString& base)
{
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    TrainingGraphPane* pane = ti->graphPane();
    window.tabs()->setCurrentWidget(ti);
    ti->rightTabs()->setCurrentWidget(pane);
    int written = 0;
    const QSize full = window.size();
    for (const auto& [suffix, size] : {std::pair{QString(), full}, std::pair{QStringLiteral("-1280x720"), QSize(1280, 720)}}) {
        window.resize(size);
        ti->loadPublishedScheme(QStringLiteral("49kb"));
        pane->setCollapsed(false);
        pane->setViewMode(TrainingGraphViewMode::Kept);
        if (!ti->waitForGraph(120000)) std::cerr << "tinyscope-screenshots: the kept view was still laying out after 120 s\n";
        QApplication::processEvents();
        pane->focusDefault();
        written += saveGrab(&window, base + QStringLiteral("training-graph-kept-49kb") + suffix + QStringLiteral(".png"));
        ti->applyBiasOnly(12);
        if (!ti->waitForGraph(120000)) std::cerr << "tinyscope-screenshots: the kept view was still laying out after 120 s\n";
        QApplication::processEvents();
        pane->focusDefault();
        written += saveGrab(&window, base + QStringLiteral("training-graph-kept-bias-only-12") + suffix + QStringLiteral(".png"));
    }
    window.resize(full);
    ti->loadPublishedScheme(QStringLiteral("49kb"));
    pane->setCollapsed(true);
    if (ti->waitForGraph(120000)) {
        QApplication::processEvents();
        pane->focusDefault();
        written += saveGrab(&window, base + QStringLiteral("training-graph-kept-collapsed-49kb.png"));
    }
    pane->setCollapsed(false);
    pane->setViewMode(TrainingGraphViewMode::Whole);
    ti->waitForGraph(120000);
    return written;
}

// Each panel as it is now, at the window's current size, to DIR/<panel><suffix>.png.
int grabPanels(MainWindow& window, const QString& base, const QString& suffix)
{
    int written = 0;
    for (const auto& p : window.panels()) {
        window.tabs()->setCurrentWidget(p.widget);
        if (p.widget == window.trainingInspectorPanel()) window.trainingInspectorPanel()->graphPane()->view()->fitAll();
        written += saveGrab(&window, base + p.stem + suffix + QStringLiteral(".png"));
    }
    return written;
}

// The inspector's Fine-tune tab after four runs of the design-space subnet on Fashion-MNIST with
// the tab's defaults (3 epochs, 2,000 training and 1,000 test images; without `measure`, as in the
// default test tier, 500 and 250: a quarter of the CPU); runs kept in a temporary folder, not the
// user's: the last run's curve, the runs on the scatter with the front and a 40 KB budget. At the
// window's size and at 1280×720. Needs dataset-fashion-mnist.
int grabFineTune(MainWindow& window, const QString& base, bool measure)
{
    if (fashionMnistDir().empty()) return 0;
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    ti->selectModel(TrainingInspectorPanel::subnetEntryName());
    FineTunePane* ft = ti->fineTunePane();
    ti->rightTabs()->setCurrentWidget(ft);
    QTemporaryDir runs;
    ft->setRunsRoot(runs.path());
    const double budget = ti->budgetKB();
    ti->setBudgetKB(40);
    const FineTuneRecipe defaults = ft->form()->recipe({});
    if (!measure) ft->form()->setImages(500, 250);
    // Biases of the last 12 convs without QAS, then of the last 4, 31 and 12 with it (the curve shown).
    const std::pair<int, bool> schemes[] = {{12, false}, {4, true}, {31, true}, {12, true}};
    for (const auto& [n, qas] : schemes) {
        ti->applyBiasOnly(n);
        ft->form()->setQas(qas);
        if (!runAndWait(ft, &FineTunePane::runFinished, [ft] { ft->start(); }, 300000))
            std::cerr << "tinyscope-screenshots: fine-tuning failed: " << ft->statusText().toStdString() << "\n";
    }
    int written = saveGrab(&window, base + QStringLiteral("training-finetune.png"));
    const QSize full = window.size();
    window.resize(1280, 720);
    written += saveGrab(&window, base + QStringLiteral("training-finetune-1280x720.png"));
    window.resize(full);
    ti->setBudgetKB(budget);
    ft->form()->setQas(true);
    ft->form()->setImages(static_cast<int>(defaults.train_images), static_cast<int>(defaults.test_images));
    ti->rightTabs()->setCurrentWidget(ti->graphPane());
    ti->selectModel(QStringLiteral("mcunet-5fps"));
    return written;
}

// The Compress panel's three pages after their runs on the smallest subnet (Labs 1 and 2): the
// sensitivity scan, every layer at 0.5 with fine-tuning, channels at 0.3 sorted, 8/4/2-bit linear and
// k-means weights. At the window's size and at 1280×720. Without `measure` fewer images and no QAT.
int grabCompress(MainWindow& window, const QString& base, bool measure)
{
    if (fashionMnistDir().empty() || !window.state()->workspace().hasSupernet()) return 0;
    CompressPanel* c = window.compressPanel();
    window.designSpacePanel()->selectMin();
    window.tabs()->setCurrentWidget(c);
    c->setImageCounts(measure ? 1000 : 200, measure ? 500 : 200);
    c->setTraining(1, measure ? 5000 : 1000);
    auto wait = [c](bool started) { return started && c->waitForIdle(600000); };
    bool ok = wait(c->scanSensitivity());
    c->setUniformSparsity(0.5);
    ok = ok && wait(c->pruneAndMeasure());
    ok = ok && wait(c->pruneChannels());
    ok = ok && wait(c->quantize());
    if (!ok) std::cerr << "tinyscope-screenshots: a Compress job failed: " << c->resultText().toStdString() << "\n";
    int written = 0;
    const QSize full = window.size();
    for (const QString& suffix : {QString(), QStringLiteral("-1280x720")}) {
        if (!suffix.isEmpty()) window.resize(1280, 720);
        for (const auto& [page, stem] : {std::pair{0, "compress-pruning"}, std::pair{1, "compress-channels"}, std::pair{2, "compress-quantization"}}) {
            c->showPage(page);
            written += saveGrab(&window, base + QString::fromLatin1(stem) + suffix + QStringLiteral(".png"));
        }
    }
    window.resize(full);
    c->showPage(0);
    c->setImageCounts(500, 500);
    c->setTraining(0, 5000);
    window.designSpacePanel()->selectLabMax();
    return written;
}

}  // namespace

int writeDemoSet(MainWindow& window, const QString& dir, bool measure)
{
    QDir().mkpath(dir);
    const QString base = dir + QLatin1Char('/');
    int written = 0;
    window.show();
    QApplication::processEvents();
    DesignSpacePanel* ds = window.designSpacePanel();
    window.tabs()->setCurrentWidget(ds);
    ds->selectMin();
    written += saveGrab(&window, base + QStringLiteral("design-space-min.png"));
    ds->selectRandom();
    written += saveGrab(&window, base + QStringLiteral("design-space-random.png"));
    ds->selectLabMax();
    written += saveGrab(&window, base + QStringLiteral("design-space-max.png"));
    prepareSearchPanels(window, base + QStringLiteral("search-history.json"));
    // An evaluation result on the shipped supernet (when it and the data are there).
    if (ds->evaluationBox()->ready()) {
        ds->evaluationBox()->setImageCounts(1000, 500);   // a quick, representative run
        ds->evaluationBox()->evaluate();
        ds->evaluationBox()->waitForIdle(300000);
        // The evaluation box's result: top-1, per-class chart, and which engine, data type and ISA measured it.
        written += saveGrab(&window, base + QStringLiteral("design-space-evaluated.png"));
        // The same subnet as deployed: "Measured by" int8 (our PTQ, then the int8 plans), then back to fp32.
        if (auto* options = ds->evaluationBox()->findChild<EvaluationOptions*>()) {
            options->setMeasuredByInt8();
            ds->evaluationBox()->evaluate();
            ds->evaluationBox()->waitForIdle(300000);
            written += saveGrab(&window, base + QStringLiteral("design-space-evaluated-int8.png"));
            options->setMeasuredBy(EvalEngine::OneDnn, EvalDtype::Fp32);
        }
        // The Deploy dialog after an int8 TFLite deploy of that subnet with the dialog's defaults:
        // the summary, the three-engine memory table and each engine's total against the board.
        QTemporaryDir deployDir;
        if (DeployDialog* deploy = ds->evaluationBox()->openDeployDialog()) {
            deploy->setOutputFile(deployDir.path() + QStringLiteral("/") + QFileInfo(deploy->outputFile()).fileName());
            deploy->deploy();
            deploy->waitForIdle(300000);
            written += saveGrab(deploy, base + QStringLiteral("deploy-dialog.png"));
            // The same on a 1280×720 screen (a dialog there has at most ~660 px below its title bar).
            deploy->resize(1280, 660);
            written += saveGrab(deploy, base + QStringLiteral("deploy-dialog-1280x720.png"));
            deploy->close();
        }
    }
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    const int leaf = prepareInspector(window);
    written += grabPanels(window, base, QString());
    // The same four panels as on a 1280×720 screen.
    const QSize full = window.size();
    window.resize(1280, 720);
    written += grabPanels(window, base, QStringLiteral("-1280x720"));
    window.resize(full);
    QApplication::processEvents();
    written += grabPlayback(window, base);
    // A third search that must also fit fine-tuning with a sparse-update pattern in 200 KB.
    SearchPanel* search = window.searchPanel();
    window.tabs()->setCurrentWidget(search);
    search->setTrainingLimit(200, QStringLiteral("bias-only:12+pw1:3@1/4"), true);
    runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(true); }, 120000);
    written += saveGrab(&window, base + QStringLiteral("search-training-budget.png"));
    search->setTrainingLimit(200, QStringLiteral("bias-only:12+pw1:3@1/4"), false);
    // The inspector zoomed in to readable labels around that gradient output.
    window.tabs()->setCurrentWidget(ti);
    ti->graphPane()->focusOp(leaf, 0.9);
    written += saveGrab(&window, base + QStringLiteral("training-inspector-detail.png"));
    written += grabKeptViews(window, base);

    written += grabFineTune(window, base, measure);
    written += grabCompress(window, base, measure);

    // MIT's real exported graph opened for inspection, and the export dialog with its findings
    // (when the reference files sit beside the repository in ../shared). Laying out its ~2,000
    // ops takes about a minute of CPU: with --no-measure (the default test tier) the graph is
    // opened and exported but its screenshot is not taken (the layout is cancelled at exit).
    const QString ref = QString::fromStdString(dataRoot()) + QStringLiteral("/../shared/reference/tinyengine");
    const QString real = ref + QStringLiteral("/49kb-int8-graph.json");
    if (!dataRoot().empty() && QFileInfo::exists(real)) {
        try {
            ti->showImportedGraph(openTrainingGraph(real));
            if (measure) {
                ti->waitForGraph(120000);
                ti->graphPane()->view()->fitAll();
                written += saveGrab(&window, base + QStringLiteral("training-graph-opened.png"));
            }
            ExportRequest rq = ti->exportRequest();
            ExportDialog dialog(rq, &window);
            dialog.setOutputFolder(QDir::tempPath());
            dialog.resize(900, 640);
            dialog.show();
            dialog.check();
            dialog.waitForIdle(120000);
            written += saveGrab(&dialog, base + QStringLiteral("export-dialog.png"));
            // A scheme TinyEngine cannot compile (every layer's weights): the findings list it.
            ti->applyLastLayers(60);
            ExportDialog refused(ti->exportRequest(), &window);
            refused.setOutputFolder(QDir::tempPath());
            refused.resize(900, 640);
            refused.show();
            refused.check();
            refused.waitForIdle(120000);
            written += saveGrab(&refused, base + QStringLiteral("export-dialog-findings.png"));
        } catch (const std::exception& e) {
            std::cerr << "tinyscope-screenshots: " << e.what() << "\n";
        }
    }

    // Last: the Fashion-MNIST predictor checked on 20 fresh subnets
    // measured on the shipped supernet (2,000 test images each, to keep screenshots quick), when it
    // and the data are there, unless `measure` is off (about a minute of CPU: --no-measure).
    if (measure && ds->evaluationBox()->ready()) {
        PredictorPanel* pred = window.predictorPanel();
        window.tabs()->setCurrentWidget(pred);
        runAndWait(pred, &PredictorPanel::jobFinished, [pred] { pred->startCheck(20, 2000); }, 300000);
        written += saveGrab(&window, base + QStringLiteral("predictor-check.png"));
        // A Fashion-MNIST search under 10 M MACs and 20 KB, its winner measured on the supernet.
        window.tabs()->setCurrentWidget(search);
        search->setLimit("millionMACs", 10, true);
        search->setLimit("KBPeakMemory", 20, true);
        runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(false); }, 120000);
        for (int i = 0; i < 600 && search->busy(); ++i) {   // a live re-run the limits started may follow
            QEventLoop wait;
            QTimer::singleShot(100, &wait, &QEventLoop::quit);
            wait.exec();
        }
        runAndWait(search, &SearchPanel::winnerMeasured, [search] { search->measureWinner(2000); }, 300000);
        QEventLoop settle;
        QTimer::singleShot(300, &settle, &QEventLoop::quit);
        settle.exec();
        written += saveGrab(&window, base + QStringLiteral("search-measured.png"));
    }
    return written;
}

int writePanelSet(MainWindow& window, const QString& dir, QSize screenPixels, const QString& suffix)
{
    QDir().mkpath(dir);
    const qreal dpr = qApp->devicePixelRatio();
    window.resize(qRound(screenPixels.width() / dpr), qRound(screenPixels.height() / dpr));
    window.show();
    QApplication::processEvents();
    QTemporaryDir history;
    prepareSearchPanels(window, history.path() + QStringLiteral("/search-history.json"));
    prepareInspector(window);
    const int n = grabPanels(window, dir + QLatin1Char('/'), QLatin1Char('-') + suffix);
    std::cout << "wrote " << n << " screenshots to " << dir.toStdString() << " (" << screenPixels.width() << "x"
              << screenPixels.height() << " pixels: a " << window.width() << "x" << window.height()
              << " window at device pixel ratio " << window.devicePixelRatioF() << ")\n";
    return n;
}

}  // namespace tinyscope::screenshots
