#include "GuiMain.h"

#include "AppState.h"
#include "DeployDialog.h"
#include "DesignSpacePanel.h"
#include "EvaluationBox.h"
#include "MainWindow.h"
#include "PredictorPanel.h"
#include "SearchPanel.h"
#include "SvgGraphView.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"
#include "ExportDialog.h"
#include "TrainingGraphFile.h"
#include "Error.h"
#include "io/DataPaths.h"
#include "io/OutputPaths.h"
#include "space/SpacePresets.h"
#include "workspace/Workspace.h"

#include "graph/TrainingGraph.h"

#include <QApplication>
#include <QSettings>
#include <QThreadPool>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QIcon>
#include <QTemporaryDir>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <iostream>
#include <string>

namespace tinyscope::ui {

namespace {

bool saveGrab(QWidget* w, const QString& path)
{
    QApplication::processEvents();
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
// dataset (when ../shared is at hand), and two recorded searches (kept in DIR, not in the
// user's history).
void prepareSearchPanels(MainWindow& window, const QString& dir)
{
    // Lab 3's searches, in its VWW workspace; the default workspace comes back afterwards.
    window.state()->setWorkspace(shippedWorkspace("lab3-vww"));
    PredictorPanel* pred = window.predictorPanel();
    if (pred->predictor() && !pred->datasetPath().isEmpty() && QFileInfo::exists(pred->datasetPath()))
        runAndWait(pred, &PredictorPanel::jobFinished, [pred] { pred->startEvaluation(); }, 120000);
    SearchPanel* search = window.searchPanel();
    QFile::remove(dir + QStringLiteral("/search-history.json"));
    search->setHistoryPath(dir + QStringLiteral("/search-history.json"));
    SearchOptions o = search->options();
    o.seed = 1;
    o.algorithm = "random";
    search->setOptions(o);
    runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(true); }, 120000);
    o.algorithm = "evolution";
    search->setOptions(o);
    runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(true); }, 120000);
}

}  // namespace

int writeScreenshots(MainWindow& window, const char* dir, bool measure)
{
    QDir().mkpath(QString::fromLocal8Bit(dir));
    const QString base = QString::fromLocal8Bit(dir) + QLatin1Char('/');
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
    prepareSearchPanels(window, QString::fromLocal8Bit(dir));
    window.state()->setWorkspace(shippedWorkspace("fashion-mnist"));
    ds->selectLabMax();
    // An evaluation result on the shipped supernet (when it and the data are there).
    if (ds->evaluationBox()->ready()) {
        ds->evaluationBox()->setImageCounts(1000, 500);   // a quick, representative run
        ds->evaluationBox()->evaluate();
        ds->evaluationBox()->waitForIdle(300000);
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
    // The inspector on MIT's demo: mcunet-5fps with the published "49kb" scheme, graph laid out.
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    ti->selectModel(QStringLiteral("mcunet-5fps"));
    ti->loadPublishedScheme(QStringLiteral("49kb"));
    if (!ti->waitForGraph(120000)) std::cerr << "tinyscope gui: the training graph was still laying out after 120 s\n";
    // The side panel on a gradient output: the partial weight gradient of conv 24 (12 of 48
    // channels); the whole graph in view (kept ops in colour, pruned ones grey).
    const TrainingGraph& g = ti->graphPane()->graph();
    int leaf = -1;
    for (const GraphOutput& o : g.outputs)
        if (o.info == "v9_conv_0_weight") leaf = g.tensor(o.tensor).producer;
    ti->graphPane()->selectOp(leaf);
    ti->graphPane()->view()->fitAll();
    for (const auto& p : window.panels()) {
        window.tabs()->setCurrentWidget(p.widget);
        written += saveGrab(&window, base + p.stem + QStringLiteral(".png"));
    }
    // A third search (Lab 3's space again) that must also fit fine-tuning with a sparse-update
    // pattern in 200 KB.
    window.state()->setWorkspace(shippedWorkspace("lab3-vww"));
    SearchPanel* search = window.searchPanel();
    window.tabs()->setCurrentWidget(search);
    search->setTrainingLimit(200, QStringLiteral("bias-only:12+pw1:3@1/4"), true);
    runAndWait(search, &SearchPanel::searchFinished, [search] { search->startSearch(true); }, 120000);
    written += saveGrab(&window, base + QStringLiteral("search-training-budget.png"));
    search->setTrainingLimit(200, QStringLiteral("bias-only:12+pw1:3@1/4"), false);
    // The same, zoomed in to readable labels around that gradient output.
    window.tabs()->setCurrentWidget(ti);
    ti->graphPane()->focusOp(leaf, 0.9);
    written += saveGrab(&window, base + QStringLiteral("training-inspector-detail.png"));

    // MIT's real exported graph opened for inspection, and the export dialog with its findings
    // (when the reference files sit beside the repository in ../shared).
    const QString ref = QString::fromStdString(dataRoot()) + QStringLiteral("/../shared/reference/tinyengine");
    const QString real = ref + QStringLiteral("/49kb-int8-graph.json");
    if (!dataRoot().empty() && QFileInfo::exists(real)) {
        try {
            ti->showImportedGraph(openTrainingGraph(real));
            ti->waitForGraph(120000);
            ti->graphPane()->view()->fitAll();
            written += saveGrab(&window, base + QStringLiteral("training-graph-opened.png"));
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
            std::cerr << "tinyscope gui: " << e.what() << "\n";
        }
    }

    // Last (it switches the space): the Fashion-MNIST predictor checked on 20 fresh subnets
    // measured on the shipped supernet (2,000 test images each, to keep screenshots quick), when it
    // and the data are there, unless `measure` is off (about a minute of CPU: --no-measure).
    if (measure && ds->evaluationBox()->ready()) {
        window.state()->setWorkspace(shippedWorkspace("fashion-mnist"));
        PredictorPanel* pred = window.predictorPanel();
        window.tabs()->setCurrentWidget(pred);
        runAndWait(pred, &PredictorPanel::jobFinished, [pred] { pred->startCheck(20, 2000); }, 300000);
        written += saveGrab(&window, base + QStringLiteral("predictor-check.png"));
        // A Fashion-MNIST search under 10 M MACs and 20 KB, its winner measured on the supernet.
        SearchPanel* search = window.searchPanel();
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

int runGui(int argc, char** argv)
{
    const char* shotDir = nullptr;
    bool measure = true;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--screenshot") == 0) {
            if (i + 1 >= argc) {
                std::cerr << "tinyscope gui: --screenshot needs a folder\n";
                return 2;
            }
            shotDir = argv[++i];
        } else if (std::strcmp(argv[i], "--no-measure") == 0) {
            measure = false;
        } else if (std::strcmp(argv[i], "gui") != 0 && argv[i][0] == '-' && argv[i][1] == '-') {
            std::cerr << "tinyscope gui: unknown option " << argv[i] << " (accepted: --screenshot DIR [--no-measure])\n";
            return 2;
        }
    }
    if (!measure && !shotDir) {
        std::cerr << "tinyscope gui: --no-measure only applies with --screenshot DIR\n";
        return 2;
    }
    const bool haveDisplay = std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY") || std::getenv("QT_QPA_PLATFORM");
    if (shotDir && !std::getenv("QT_QPA_PLATFORM")) ::setenv("QT_QPA_PLATFORM", "offscreen", 1);
    if (!shotDir && !haveDisplay) {
        std::cerr << "tinyscope: no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the GUI cannot open.\n"
                     "Run it under a desktop session or with `xvfb-run -a tinyscope`, render the panels with\n"
                     "`tinyscope gui --screenshot DIR`, or use the CLI, e.g.:\n"
                     "  tinyscope cost --max          # costs of the largest subnet\n"
                     "  tinyscope space show          # the design space\n"
                     "  tinyscope help                # every command\n";
        return 1;
    }
    if (shotDir) {
        try {
            requireWritableFolder(shotDir, "--screenshot");
        } catch (const InputError& e) {
            std::cerr << "tinyscope gui: " << e.what() << "\n";
            return 2;
        }
    }
    int qargc = 1;
    QApplication app(qargc, argv);
    QApplication::setApplicationName(QStringLiteral("tinyscope"));
    QApplication::setOrganizationName(QStringLiteral("tinyscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/tinyscope.svg")));   // resources/tinyscope.qrc
    MainWindow window;
    if (shotDir) {
        int n = writeScreenshots(window, shotDir, measure);
        std::cout << "wrote " << n << " screenshots to " << shotDir << "\n";
        return n > 0 ? 0 : 1;
    }
    window.show();
    return finishGui(app.exec());
}

int finishGui(int exitCode, int graceMs)
{
    QThreadPool* pool = QThreadPool::globalInstance();
    if (pool->activeThreadCount() == 0 || pool->waitForDone(graceMs)) return exitCode;
    QSettings().sync();
    std::fflush(nullptr);
    std::_Exit(exitCode);
}

}  // namespace tinyscope::ui
