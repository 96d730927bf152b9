#include "LoopShots.h"

#include "AppState.h"
#include "DeviceVerdictView.h"
#include "EventWait.h"
#include "ExportDialog.h"
#include "FineTuneCurve.h"
#include "FineTuneForm.h"
#include "FineTunePane.h"
#include "InspectorFiles.h"
#include "MainWindow.h"
#include "PredictorPanel.h"
#include "SchemeAccuracyScatter.h"
#include "SearchLimitsForm.h"
#include "SearchPanel.h"
#include "SvgGraphView.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"

#include "data/ImageDataset.h"
#include "search/TinyEngineTrainingLimit.h"
#include "workspace/Workspace.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUndoStack>

#include <iostream>

namespace tinyscope::screenshots {

using namespace tinyscope::ui;

namespace {

constexpr const char* kWorkspace = "fashion-mnist-te";
constexpr const char* kBoard = "stm32f746";
constexpr double kMillionMACs = 30;
constexpr double kBudgetKB = 64;
const QSize kWindow(1280, 720);

bool fail(const std::string& why)
{
    std::cerr << "tinyscope-screenshots --loop: " << why << "\n" << std::flush;
    return false;
}

bool save(QWidget* w, const QString& path, const std::string& what)
{
    // This script runs outside QApplication::exec(): objects deleted later (a chart's removed axes)
    // would otherwise still be drawn.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    if (!w->grab().save(path)) return fail("could not write " + path.toStdString());
    std::cout << "wrote " << path.toStdString() << ": " << what << "\n" << std::flush;
    return true;
}

// Until `done` (a flag set by a signal) or the timeout; the event loop runs in between.
bool waitFor(const bool& done, int timeoutMs)
{
    return processEventsUntil([&done] { return done; }, timeoutMs);
}

std::string kb(std::int64_t bytes) { return QString::number(bytes / 1024.0, 'f', 1).toStdString() + " KB"; }

// The Export dialog's text, for a verification that did not match.
std::string dialogText(const ExportDialog& d)
{
    const DeviceVerdictView& v = *d.verdictView();
    return "status: " + d.statusText().toStdString() + "\nprogress: " + d.progressText().toStdString() +
           "\nverdict: " + v.verdictText().toStdString() + "\ntraining: " + v.trainingText().toStdString() +
           "\ndetails: " + v.detailsText().toStdString();
}

// 1. The search, screenshot of the Search panel. Sets `scheme` to the winner's TinyEngine scheme.
bool searchStep(MainWindow& window, const QString& base, const QString& historyPath, std::string& scheme)
{
    SearchPanel* search = window.searchPanel();
    window.tabs()->setCurrentWidget(search);
    // The panel's first showing runs a preview search: let it end before the limits change.
    processEventsUntil([search] { return !search->busy(); }, 300000);
    search->setHistoryPath(historyPath);
    search->setLimit("millionMACs", kMillionMACs, true);
    search->setLimit("KBPeakMemory", 40, false);   // the workspace's starting 40 KB, switched off
    auto* limits = search->findChild<SearchLimitsForm*>();
    if (!limits) return fail("the Search panel has no limits form");
    limits->setTrainer(SearchLimitsForm::Trainer::TinyEngine, QString::fromLatin1(kBoard));
    search->setTrainingLimit(kBudgetKB, QString(), true);   // empty pattern: the best scheme per subnet
    SearchOptions o = search->options();
    o.algorithm = "evolution";
    o.population = 20;
    o.generations = 5;
    o.seed = 1;
    search->setOptions(o);
    std::cout << "searching " << kWorkspace << ": " << search->constraints().describe() << " (population 20, 5 generations)\n" << std::flush;
    bool finished = false, ok = false;
    const QMetaObject::Connection c = QObject::connect(search, &SearchPanel::searchFinished, search, [&](bool success) {
        finished = true;
        ok = success;
    });
    search->startSearch(true);
    waitFor(finished, 600000);
    QObject::disconnect(c);
    processEventsUntil([search] { return !search->busy(); }, 300000);   // a re-run the limits queued
    const SearchResult* r = search->lastResult();
    if (!finished || !ok || !r || !r->found)
        return fail("the search did not finish with a winner: " + search->statusText().toStdString());
    const auto plan = TinyEngineTrainingLimit::reportOf(*r);
    if (!plan || !plan->trainable || plan->scheme.empty())
        return fail("the winner has no TinyEngine training plan: " + search->statusText().toStdString());
    scheme = plan->scheme;
    return save(&window, base + QStringLiteral("loop-search.png"),
                "the Search panel: winner " + QString::number(r->best.accuracy, 'f', 2).toStdString() + " % predicted, " +
                    QString::number(r->best.cost.millionMacs(), 'f', 1).toStdString() + " M MACs, trains on TinyEngine (" + kBoard +
                    ") with " + plan->scheme + ": inference " + kb(plan->inference_peak_bytes) + " + extra " + kb(plan->extra_bytes) + " = " +
                    kb(plan->totalBytes()) + " (budget " + kb(static_cast<std::int64_t>(kBudgetKB * 1024)) + "), ledger " +
                    kb(plan->ledger_peak_bytes));
}

// 2. "Use this subnet", then the Training inspector with the winner's scheme.
bool inspectorStep(MainWindow& window, const QString& base, const std::string& scheme)
{
    SearchPanel* search = window.searchPanel();
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    QString chosen;
    const QMetaObject::Connection c =
        QObject::connect(search, &SearchPanel::winnerSchemeChosen, search, [&chosen](const QString& p) { chosen = p; });
    search->useWinner();   // as the winner card's "Use this subnet"
    QObject::disconnect(c);
    if (chosen.toStdString() != scheme) return fail("\"Use this subnet\" handed on the scheme '" + chosen.toStdString() + "', not " + scheme);
    window.tabs()->setCurrentWidget(ti);
    if (ti->currentModel() != inspectorSubnetKey())
        return fail("the Training inspector shows " + ti->currentModel().toStdString() + ", not the design-space subnet");
    const QString step = ti->layerModel()->undoStack()->undoText();
    if (step != QStringLiteral("scheme ") + chosen)
        return fail("the Training inspector did not apply the winner's scheme (last step: '" + step.toStdString() + "')");
    // The SRAM budget (the device's SRAM, the chart's dashed line): the board's 320 KB.
    ti->setBudgetKB(320);
    // The graph's kept ops only, framed on the loss and the gradient outputs: what the scheme trains.
    ti->rightTabs()->setCurrentWidget(ti->graphPane());
    ti->graphPane()->setViewMode(TrainingGraphViewMode::Kept);
    if (!ti->waitForGraph(180000)) std::cerr << "tinyscope-screenshots --loop: the training graph was still laying out after 180 s\n";
    QApplication::processEvents();
    ti->graphPane()->focusDefault();
    return save(&window, base + QStringLiteral("loop-inspector.png"),
                "the Training inspector on the winner with its scheme " + scheme + " (" + ti->totalsText().simplified().toStdString() + ")");
}

// 3. Export (reference form, the board, refuse on errors), write, verify on the emulated M7.
bool exportStep(MainWindow& window, const QString& base, const QString& exportDir)
{
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    ExportRequest rq;
    try {
        rq = ti->exportRequest();
    } catch (const std::exception& e) {
        return fail(std::string("the export request: ") + e.what());
    }
    ExportDialog dialog(rq, &window);
    dialog.setOutputFolder(exportDir);
    dialog.setForm(ExportForm::Reference);
    dialog.setBoard(QString::fromLatin1(kBoard));
    for (QCheckBox* box : dialog.findChildren<QCheckBox*>())
        if (box->text().startsWith(QStringLiteral("Refuse to write"))) box->setChecked(true);   // strict
    dialog.resize(kWindow);
    dialog.show();
    dialog.check();
    dialog.waitForIdle(300000);
    if (!dialog.hasPlan()) return fail("the export check failed:\n" + dialogText(dialog));
    if (dialog.plan()->errors() > 0) return fail("the checker found errors:\n" + dialogText(dialog));
    dialog.write();
    dialog.waitForIdle(300000);
    if (dialog.writtenFiles().isEmpty() || !dialog.canVerify()) return fail("the export was not written:\n" + dialogText(dialog));
    std::cout << "exported to " << exportDir.toStdString() << "; verifying on the emulated Cortex-M7 …\n" << std::flush;
    dialog.verify();
    dialog.waitForIdle(900000);
    const DeviceVerdictView& v = *dialog.verdictView();
    if (dialog.busy() || v.state() != DeviceVerdictView::State::Matches)
        return fail("the verification on the emulated Cortex-M7 did not pass:\n" + dialogText(dialog));
    dialog.resize(kWindow);   // as large as a 1280×720 screen lets it be (1280×680), the verdict under the findings
    return save(&dialog, base + QStringLiteral("loop-export-verified.png"),
                "the Export dialog after Write and Verify: " + v.verdictText().toStdString());
}

// 4. The Fine-tune tab: one short epoch of the winner with its scheme.
bool fineTuneStep(MainWindow& window, const QString& base, const QString& runsDir)
{
    if (fashionMnistDir().empty()) return fail("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist): no fine-tuning");
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    FineTunePane* ft = ti->fineTunePane();
    ti->rightTabs()->setCurrentWidget(ft);
    ft->setRunsRoot(runsDir);
    ft->form()->setData(QStringLiteral("fashion-mnist"));
    ft->form()->setEpochs(3);   // a curve, not a point
    ft->form()->setImages(2000, 1000);
    bool finished = false, ok = false;
    const QMetaObject::Connection c = QObject::connect(ft, &FineTunePane::runFinished, ft, [&](bool success) {
        finished = true;
        ok = success;
    });
    std::cout << "fine-tuning 3 epochs, 2,000 training and 1,000 test images …\n" << std::flush;
    ft->start();
    waitFor(finished, 900000);
    QObject::disconnect(c);
    ft->waitForIdle(60000);
    if (!finished || !ok || ft->curve()->points() < 3) return fail("fine-tuning failed: " + ft->statusText().toStdString());
    // The curve is what this shot is about. The scatter beside it keeps ~500 px (its legend's
    // budget entry does not wrap), so the tabs get two thirds of the inspector, as a user drags the
    // splitter; the curve then has the rest of the charts' width.
    for (QSplitter* split : ti->findChildren<QSplitter*>())
        if (split->orientation() == Qt::Horizontal && split->count() == 2 && split->widget(1) == ti->rightTabs()) {
            const int total = split->width();
            split->setSizes({total / 3, total - total / 3});
        }
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    for (QSplitter* split : ft->findChildren<QSplitter*>())
        if (split->count() == 2 && split->widget(1) == ft->scatter()) {
            const int total = split->orientation() == Qt::Horizontal ? split->width() : split->height();
            split->setSizes({total * 3 / 5, total - total * 3 / 5});
        }
    return save(&window, base + QStringLiteral("loop-finetune.png"),
                "the Fine-tune tab's curve and scatter: " + ft->statusText().toStdString());
}

}  // namespace

int writeLoopSet(MainWindow& window, const QString& dir)
{
    QDir().mkpath(dir);
    const QString base = dir + QLatin1Char('/');
    QTemporaryDir scratch;   // the search history, the export, the fine-tuning runs
    if (!scratch.isValid()) {
        fail("no temporary folder");
        return 0;
    }
    window.resize(kWindow);
    window.show();
    QApplication::processEvents();
    try {
        window.state()->setWorkspace(shippedWorkspace(kWorkspace));
    } catch (const std::exception& e) {
        fail(e.what());
        return 0;
    }
    const Workspace& w = window.state()->workspace();
    if (!w.hasSupernet() || !window.predictorPanel()->predictor()) {
        fail(std::string("the ") + kWorkspace + " workspace needs its supernet and accuracy predictor "
             "(models/supernets/mcunet-fmnist-te.pth, models/predictors/mcunet-fmnist-te.bin)");
        return 0;
    }
    // The window's first-start line names the workspace it opened with: not this one.
    window.statusBar()->clearMessage();
    std::cout << "workspace " << w.title << ": supernet " << w.supernet << ", predictor " << w.predictor << "\n" << std::flush;

    int written = 0;
    std::string scheme;
    if (!searchStep(window, base, scratch.filePath(QStringLiteral("search-history.json")), scheme)) return written;
    ++written;
    if (!inspectorStep(window, base, scheme)) return written;
    ++written;
    const QString exportDir = scratch.filePath(QStringLiteral("export"));
    QDir().mkpath(exportDir);
    if (!exportStep(window, base, exportDir)) return written;
    ++written;
    if (!fineTuneStep(window, base, scratch.filePath(QStringLiteral("finetune")))) return written;
    ++written;
    return written;
}

}  // namespace tinyscope::screenshots
