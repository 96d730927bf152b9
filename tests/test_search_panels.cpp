// The Predictor and Search panels as a user drives them: training off the GUI thread with a live
// chart and Cancel, the predicted-vs-measured scatter, save / load; searching with live re-runs,
// impossible limits explained, a history that survives a restart and exports, "use this subnet"
// (the screenshot tool showing both panels after a run is test_gui's), search playback: the slider
// and play button over a run's generations, the populations drawn, hover text and click-to-load;
// the fine-tuning limit for TinyEngine on a board and the winner's scheme handed to the inspector.
#include "ImageSupport.h"
#include "TestSupport.h"

#include "AppState.h"
#include "JobRunner.h"
#include "PredictorPanel.h"
#include "ConvergenceChart.h"
#include "ParetoChart.h"
#include "InspectorFiles.h"
#include "SearchLimitsForm.h"
#include "SearchPanel.h"
#include "SearchPlayback.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"

#include "Error.h"
#include "graph/PublishedSchemes.h"
#include "graph/TrainingBudget.h"
#include "io/AtomicFile.h"
#include "nn/accuracy/EvaluationJob.h"
#include "predict/PredictionMetrics.h"
#include "space/ArchSampler.h"
#include "io/Text.h"
#include "io/JsonFile.h"
#include "search/SearchHistory.h"
#include "search/TinyEngineTrainingLimit.h"
#include "search/TrainingMemoryLimit.h"
#include "space/SpacePresets.h"
#include "tinyengine/BoardProfile.h"
#include "zoo/SubnetNetwork.h"
#include "workspace/ShippedModels.h"
#include "workspace/Workspace.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QUndoStack>

#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QSlider>
#include <QPushButton>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QScatterSeries>
#include <set>
#include <tuple>
#include <QTemporaryDir>
#include <QTimer>

using namespace tinyscope;

namespace {
using test::distinctColours;

int distinctColours(QWidget* w)
{
    w->resize(1500, 950);
    w->show();
    QApplication::processEvents();
    return distinctColours(w->grab().toImage(), 5);
}

// "" when the two resolve the same per conv, else the first difference.
std::string schemeDifference(const ResolvedScheme& got, const ResolvedScheme& want)
{
    if (got.numConvs() != want.numConvs())
        return "convs " + std::to_string(got.numConvs()) + " vs " + std::to_string(want.numConvs());
    for (int i = 0; i < got.numConvs(); ++i) {
        const ConvUpdate &a = got.conv(i), &b = want.conv(i);
        if (a.bias != b.bias || a.ratio != b.ratio || a.k != b.k || a.k_compiler != b.k_compiler)
            return "conv " + std::to_string(i) + ": bias " + std::to_string(a.bias) + " vs " + std::to_string(b.bias) + ", k " +
                   std::to_string(a.k) + " vs " + std::to_string(b.k);
    }
    if (got.n_bias_update != want.n_bias_update || got.first_updated != want.first_updated) return "n_bias_update / first_updated";
    return {};
}
}  // namespace

class TestSearchPanels : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

    QString smallDataset()
    {
        // 600 of the lab's pairs in the lab's folder layout.
        const QString dir = tmp.path() + QStringLiteral("/data");
        if (!QFileInfo::exists(dir + QStringLiteral("/src/small_acc_table.json"))) {
            QDir().mkpath(dir + QStringLiteral("/src"));
            Json all = readJsonFile(test::sharedPath("reference/mcunet-vww/acc_datasets/src/OFAMCUNets_r144_gpu2_acc_table.json"));
            Json part = Json::array();
            for (std::size_t i = 0; i < 600; ++i) part.push_back(all[i]);
            writeJsonFile((dir + QStringLiteral("/src/small_acc_table.json")).toStdString(), part);
        }
        return dir;
    }

    // A Search panel on the shipped VWW predictor with a search of the given size.
    static void prepareSearch(ui::SearchPanel& panel, const ui::AppState& state, int population, int generations)
    {
        panel.setOracle(std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), state.space())));
        SearchOptions o = panel.options();
        o.population = population;
        o.generations = generations;
        panel.setOptions(o);
    }

private Q_SLOTS:
    void initTestCase()
    {
        // Keep settings and run history out of the user's folders.
        qputenv("XDG_CONFIG_HOME", (tmp.path() + QStringLiteral("/config")).toLocal8Bit());
        qputenv("XDG_STATE_HOME", (tmp.path() + QStringLiteral("/state")).toLocal8Bit());
    }

    void predictorPanelTrainsOffTheGuiThread()
    {
        REQUIRE_SHARED();
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::PredictorPanel panel(&state);
        QVERIFY2(panel.predictor() && panel.predictor()->trained(), "the shipped predictor is loaded out of the box");
        panel.setDatasetPath(smallDataset());
        PredictorRecipe r = PredictorRecipe::standard();
        r.epochs = 4;
        panel.setRecipe(r);
        QSignalSpy finished(&panel, &ui::PredictorPanel::jobFinished);
        QSignalSpy changed(&panel, &ui::PredictorPanel::predictorChanged);
        int ticks = 0;
        QTimer ticker;
        QObject::connect(&ticker, &QTimer::timeout, [&] { ++ticks; });
        ticker.start(5);
        panel.startTraining();
        QVERIFY(panel.busy());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.front().front().toBool(), true);
        QVERIFY2(ticks > 0, "the event loop kept running while training");
        QCOMPARE(changed.size(), 1);
        QCOMPARE(panel.epochPoints(), 4);
        QCOMPARE(panel.scatterPoints(), 120);   // the held-out fifth of 600 pairs
        QVERIFY(panel.metricsText().contains(QStringLiteral("MAE")));
        QCOMPARE(panel.predictor()->card().data_pairs, std::size_t(600));
        QVERIFY(distinctColours(&panel) > 30);

        const QString saved = tmp.path() + QStringLiteral("/panel.bin");
        QVERIFY(panel.savePredictor(saved));
        QVERIFY(panel.loadPredictor(tmp.path() + QStringLiteral("/panel.json")));
        QCOMPARE(changed.size(), 2);
        QCOMPARE(QString::fromStdString(panel.predictor()->path()), saved);
        QCOMPARE(panel.epochPoints(), 4);   // the chart shows the loaded card's history
    }

    void switchingToTheFashionMnistSpaceBringsItsPredictorAndData()
    {
        // Out of the box for both spaces: the shipped predictor of the new space and the accuracy
        // dataset it was trained on, evaluated on its held-out fifth (1,200 of 6,000 pairs).
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::PredictorPanel panel(&state);
        state.setSpace(presetSpace("mcunet-fmnist"), QStringLiteral("mcunet-fmnist"));
        QVERIFY(panel.predictor());
        QCOMPARE(panel.predictor()->card().space_name, std::string("mcunet-fmnist"));
        QVERIFY2(panel.datasetPath().endsWith(QStringLiteral("datasets/mcunet-fmnist-accdata")), qPrintable(panel.datasetPath()));
        QSignalSpy finished(&panel, &ui::PredictorPanel::jobFinished);
        panel.startEvaluation();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.front().front().toBool(), true);
        QCOMPARE(panel.scatterPoints(), 1200);

        // Checked on the supernet: fresh draws (seed kCheckSeed) predicted by this predictor and
        // measured on the shipped supernet (few images, to stay fast); the metrics are those of
        // the two columns, and the scatter holds one point per subnet.
        finished.clear();
        panel.startCheck(5, 300);
        QVERIFY(finished.wait(300000));
        QVERIFY2(finished.front().front().toBool(), qPrintable(panel.lastError()));
        QCOMPARE(panel.scatterPoints(), 5);
        ArchSampler sampler(state.space());
        PyRandom rng(ui::PredictorPanel::kCheckSeed);
        std::vector<SubnetConfig> draws;
        for (int i = 0; i < 5; ++i) draws.push_back(sampler.random(rng));
        const std::vector<double> predicted = panel.predictor()->predictUncached(draws);
        QVERIFY2(panel.metricsText().contains(QStringLiteral("(5 fresh subnets)")), qPrintable(panel.metricsText()));
        QVERIFY2(panel.metricsText().contains(QStringLiteral("after the mean offset of")), qPrintable(panel.metricsText()));
        QVERIFY(panel.metricsText().contains(QStringLiteral("300 images of fashion-mnist:test")));
        QCOMPARE(panel.lastCheck().predicted, predicted);
        QCOMPARE(panel.lastCheck().metrics.kendall_tau, kendallTau(predicted, panel.lastCheck().measured));
    }

    void cancelledTrainingKeepsThePredictor()
    {
        REQUIRE_SHARED();
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::PredictorPanel panel(&state);
        auto before = panel.predictor();
        panel.setDatasetPath(smallDataset());
        PredictorRecipe r = PredictorRecipe::standard();
        r.epochs = 2000;
        panel.setRecipe(r);
        QSignalSpy finished(&panel, &ui::PredictorPanel::jobFinished);
        panel.startTraining();
        QTimer::singleShot(300, &panel, &ui::PredictorPanel::cancel);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.front().front().toBool(), false);
        QCOMPARE(panel.predictor(), before);
        QVERIFY(!panel.busy());
    }

    void searchPanelRunsRecordsAndExplains()
    {
        const QString historyPath = tmp.path() + QStringLiteral("/history.json");
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::SearchPanel panel(&state, historyPath);
        auto pred = std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), state.space()));
        panel.setOracle(pred);
        SearchOptions o = panel.options();
        o.seed = 1;
        panel.setOptions(o);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(true);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.takeFirst().front().toBool(), true);
        const SearchResult* r = panel.lastResult();
        QVERIFY(r);
        QVERIFY(r->best.cost.macs <= 60000000 && r->best.cost.peak_activation_bytes <= 250 * 1024);
        QVERIFY(r->best.accuracy >= 92.5);
        QCOMPARE(panel.historyRows(), 1);
        QCOMPARE(panel.convergencePoints(), 21);
        QVERIFY(panel.paretoPoints() >= 1050);
        QVERIFY(distinctColours(&panel) > 30);
        // The winner's diagram (saved from its right-click menu) carries its prediction and costs.
        const std::string winnerTitle = "predicted top-1 " + formatFixed(r->best.accuracy, 2) + " %   MACs(M): " +
                                        formatFixed(r->best.cost.millionMacs(), 2) + "  PeakMem(KB): " + formatFixed(r->best.cost.peakKB(), 2);
        QVERIFY2(panel.winnerDiagramDot().find("label=\"" + winnerTitle + "\"") != std::string::npos, panel.winnerDiagramDot().c_str());

        // Impossible limits are explained at once, without a search.
        panel.setLimit("KBPeakMemory", 64, true);
        panel.startSearch(true);
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished.takeFirst().front().toBool(), false);
        QVERIFY2(panel.statusText().contains(QStringLiteral("the smallest subnet in this space needs 72 KB")),
                 qPrintable(panel.statusText()));
        QCOMPARE(panel.historyRows(), 1);

        // "Use this subnet" selects the winner everywhere.
        QSignalSpy used(&panel, &ui::SearchPanel::subnetUsed);
        panel.useWinner();
        QCOMPARE(used.size(), 1);
        QVERIFY(state.subnet() == r->best.config);

        // Export, then a new panel (a restart) finds the run and re-opens it.
        QVERIFY(panel.exportHistory(tmp.path() + QStringLiteral("/runs.csv")));
        QVERIFY(panel.exportHistory(tmp.path() + QStringLiteral("/runs.json")));
        const std::string csv = readFileBytes((tmp.path() + QStringLiteral("/runs.csv")).toStdString());
        QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 2L);
        QVERIFY(csv.find("\"MACs ≤ 60 M, peak SRAM ≤ 250 KB\"") != std::string::npos);
        Json exported = readJsonFile((tmp.path() + QStringLiteral("/runs.json")).toStdString());
        QCOMPARE(exported["runs"].size(), std::size_t(1));
        QCOMPARE(exported["runs"][0]["result"]["best"]["config"], r->best.config.toJson());

        ui::SearchPanel reopened(&state, historyPath);
        QCOMPARE(reopened.historyRows(), 1);
        QVERIFY(reopened.winnerDiagramDot().empty());
        reopened.reopen(0);
        QCOMPARE(reopened.convergencePoints(), 21);
        QVERIFY(reopened.winnerDiagramDot().find("label=\"" + winnerTitle + "\"") != std::string::npos);
        QVERIFY(reopened.paretoPoints() > 100);
        QCOMPARE(reopened.constraints().find("KBPeakMemory")->max, 250.0);
        // Issue 19: the re-opened run is typed again (converted from the history's JSON once, at the
        // edge): the same winner, costs, generations, front and limits as the run that was recorded.
        const SearchResult* back = reopened.lastResult();
        QVERIFY(back);
        QVERIFY(back->found && back->best.config == r->best.config);
        QCOMPARE(back->best.cost.macs, r->best.cost.macs);
        QCOMPARE(back->best.cost.peak_activation_bytes, r->best.cost.peak_activation_bytes);
        QCOMPARE(back->best.accuracy, r->best.accuracy);
        QCOMPARE(back->history.size(), r->history.size());
        QCOMPARE(back->constraints.describe(), r->constraints.describe());
        QCOMPARE(back->options.seed, std::uint64_t(1));
        const std::vector<std::size_t> front = r->paretoFront(), frontBack = back->paretoFront();
        QCOMPARE(frontBack.size(), front.size());
        for (std::size_t i = 0; i < front.size(); ++i)
            QVERIFY(back->evaluated[frontBack[i]].config == r->evaluated[front[i]].config);
        // ... and "Use this subnet" works on it as on a live run.
        state.setSubnet(ArchSampler(state.space()).minConfig(state.space().resolutions.front()));
        QVERIFY(!(state.subnet() == r->best.config));
        QSignalSpy usedAgain(&reopened, &ui::SearchPanel::subnetUsed);
        reopened.useWinner();
        QCOMPARE(usedAgain.size(), 1);
        QVERIFY(state.subnet() == r->best.config);
    }

    // Issue 19: the search runs on a JobRunner like every other job, so quitting (cancelAll, called
    // by finishGui) stops it: the panel reports a cancelled search, and nothing is left running.
    void quittingCancelsARunningSearch()
    {
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));
        ui::SearchPanel panel(&state, tmp.path() + QStringLiteral("/quit.json"));
        prepareSearch(panel, state, 100, 50);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(true);
        QVERIFY(panel.busy());
        QCOMPARE(ui::JobRunner::running(), 1);
        ui::JobRunner::cancelAll();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.takeFirst().front().toBool(), false);
        QVERIFY2(panel.statusText().startsWith(QStringLiteral("Cancelled after")), qPrintable(panel.statusText()));
        QCOMPARE(ui::JobRunner::running(), 0);
        QCOMPARE(panel.historyRows(), 0);   // a cancelled run is not recorded
    }

    void searchPanelMeasuresTheWinnerOnTheSupernet()
    {
        // The lab's search_and_measure_acc in the panel: the winner of a Fashion-MNIST search is
        // measured on the shipped supernet off the GUI thread (few images, to stay fast), and the
        // number is the evaluator's for that subnet and those images.
        ui::AppState state;
        state.setSpace(presetSpace("mcunet-fmnist"), QStringLiteral("mcunet-fmnist"));
        ui::SearchPanel panel(&state, tmp.path() + QStringLiteral("/measure-history.json"));
        panel.setOracle(std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shippedPredictorPath("mcunet-fmnist"), state.space())));
        panel.setLimit("millionMACs", 10, true);
        panel.setLimit("KBPeakMemory", 20, true);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(false);
        QVERIFY(finished.wait(60000));
        const SubnetConfig winner = panel.lastResult()->best.config;
        QSignalSpy measured(&panel, &ui::SearchPanel::winnerMeasured);
        panel.measureWinner(300);
        QVERIFY(measured.wait(300000));
        QVERIFY(measured.front().front().toBool());
        QTRY_VERIFY(!panel.measuring());
        const WinnerMeasurement& m = panel.winnerMeasurement();
        QVERIFY(m.searched == winner && m.measured_config == winner && !m.transferred);
        QCOMPARE(m.evaluation.images, std::size_t(300));
        EvaluationRequest rq = shippedSupernetRequest();
        rq.images = 300;
        rq.config = winner;
        QCOMPARE(m.measured, runEvaluation(rq).top1);
        QVERIFY2(panel.findChild<QLabel*>() != nullptr, "winner label");
        bool shown = false;
        for (QLabel* l : panel.findChildren<QLabel*>())
            shown = shown || l->text().contains(QStringLiteral("<b>measured %1 %</b> top-1 on 300 test images").arg(m.measured, 0, 'f', 2));
        QVERIFY(shown);
    }

    void searchPanelLimitsFineTuningMemory()
    {
        const QString historyPath = tmp.path() + QStringLiteral("/train-history.json");
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::SearchPanel panel(&state, historyPath);
        panel.setOracle(std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), state.space())));
        panel.setTrainingLimit(200, QStringLiteral("bias-only:12+pw1:3@1/4"), true);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(true);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.takeFirst().front().toBool(), true);
        const SearchResult* r = panel.lastResult();
        const TrainingBudgetCost t =
            trainingBudgetCost(state.space(), r->best.config, TrainingSchemePattern::parse("bias-only:12+pw1:3@1/4"));
        QVERIFY(t.totalBytes() <= 200 * 1024);
        QVERIFY(r->best.cost.macs <= 60000000 && r->best.cost.peak_activation_bytes <= 250 * 1024);
        bool shown = false;
        for (QLabel* l : panel.findChildren<QLabel*>())
            shown = shown || l->text().contains(QStringLiteral("fine-tuning with <tt>bias-only:12+pw1:3@1/4</tt>: inference working set %1 KB")
                                                    .arg(t.inference_peak_bytes / 1024.0, 0, 'f', 1));
        QVERIFY(shown);
        // A restart re-opens the run with its pattern and budget.
        ui::SearchPanel reopened(&state, historyPath);
        reopened.reopen(0);
        QCOMPARE(reopened.constraints().find("KBTrainingMemory")->max, 200.0);
        QCOMPARE(reopened.constraints().describe(), r->constraints.describe());
        // An impossible budget and a bad pattern are explained without a search.
        panel.setTrainingLimit(100, QStringLiteral("bias-only:12+pw1:3@1/4"), true);
        panel.startSearch(true);
        QCOMPARE(finished.takeFirst().front().toBool(), false);
        QVERIFY2(panel.statusText().contains(QStringLiteral("needs 101.657 KB (inference working set 72 KB + extra 29.657 KB)")),
                 qPrintable(panel.statusText()));
        panel.setTrainingLimit(300, QStringLiteral("pw1:2@1/3"), true);
        panel.startSearch(true);
        QCOMPARE(finished.takeFirst().front().toBool(), false);
        QVERIFY2(panel.statusText().contains(QStringLiteral("pw1:2@1/3")), qPrintable(panel.statusText()));
    }

    void movingALimitReRunsAFastSearchLive()
    {
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::SearchPanel panel(&state, tmp.path() + QStringLiteral("/live.json"));
        prepareSearch(panel, state, 10, 4);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(false);
        QVERIFY(finished.wait(30000));
        QCOMPARE(panel.convergencePoints(), 5);   // the small search asked for: 4 generations after the first
        QCOMPARE(panel.historyRows(), 0);   // not recorded
        // A new limit value: the search re-runs by itself under the new limit.
        panel.setLimit("KBPeakMemory", 250, true);   // restoring a value does not re-run
        finished.clear();
        auto* spin = panel.findChildren<QDoubleSpinBox*>().at(1);   // the peak-SRAM limit
        spin->setValue(150);
        QVERIFY(finished.wait(30000));
        QVERIFY(panel.lastResult()->best.cost.peak_activation_bytes <= 150 * 1024);
        QCOMPARE(panel.lastResult()->constraints.find("KBPeakMemory")->max, 150.0);
        QCOMPARE(panel.historyRows(), 1);   // an edit that is not a drag is recorded
    }

    // Issue 19: re-opening a VWW run while the Fashion-MNIST space was active clamped its limits to
    // that space's ranges. The run's space comes back with it, and its limits as they were.
    // Issue 22: search playback. The slider shows, at generation g, exactly the population the
    // core recorded for g, its mutation and crossover children as many as the options make, the
    // best so far the search's history says; play runs through every generation; a click on a point
    // loads that subnet into AppState; a re-opened run plays back too, an older one says what it lacks.
    void searchPlaybackShowsEachGenerationsPopulation()
    {
        const QString historyPath = tmp.path() + QStringLiteral("/playback.json");
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));
        ui::SearchPanel panel(&state, historyPath);
        prepareSearch(panel, state, 20, 6);
        SearchOptions o = panel.options();
        o.seed = 2;
        panel.setOptions(o);
        panel.setLimit("millionMACs", 60, true);
        panel.setLimit("KBPeakMemory", 250, true);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(true);
        QVERIFY(finished.wait(30000));
        const SearchResult* r = panel.lastResult();
        QVERIFY(r && r->populations.size() == 7);
        const int mutations = static_cast<int>(std::lround(o.mutation_ratio * o.population));   // 10 of 20
        const int parents = static_cast<int>(std::lround(o.parent_ratio * o.population));       // 5
        auto* slider = panel.findChild<QSlider*>(QStringLiteral("playbackSlider"));
        QVERIFY(slider);
        QVERIFY(!slider->toolTip().isEmpty() && !panel.playback()->playButton()->toolTip().isEmpty());
        QCOMPARE(slider->maximum(), o.generations);
        QCOMPARE(slider->value(), o.generations);   // a new run is shown at its last generation
        ui::ParetoChart* pareto = panel.paretoChart();
        for (int g = 0; g <= o.generations; ++g) {
            slider->setValue(g);
            QCOMPARE(pareto->generation(), g);
            QCOMPARE(pareto->populationShown(), r->populations[static_cast<std::size_t>(g)]);
            QCOMPARE(static_cast<int>(pareto->populationShown().size()), g == 0 ? o.population : parents + o.population);
            QCOMPARE(pareto->mutationShown(), g == 0 ? 0 : mutations);
            QCOMPARE(pareto->crossoverShown(), g == 0 ? 0 : o.population - mutations);
            QVERIFY(pareto->bestShown() >= 0);
            QCOMPARE(r->evaluated[static_cast<std::size_t>(pareto->bestShown())].accuracy, r->history[static_cast<std::size_t>(g)].best);
            QCOMPARE(panel.convergenceChart()->marker(), double(g));
            QVERIFY2(panel.playback()->findChildren<QLabel*>().size() >= 2, "playback labels");
            // The mutation series holds exactly generation g's mutated children.
            for (const auto& [series, candidates] : pareto->scatterSeries())
                if (series->name().contains(QStringLiteral("mutation"))) {
                    QCOMPARE(static_cast<int>(candidates.size()), mutations);
                    for (std::size_t i : candidates) {
                        QCOMPARE(r->evaluated[i].origin, CandidateOrigin::mutation);
                        QCOMPARE(r->evaluated[i].generation, g);
                    }
                }
        }
        // The marker is not a legend entry (narrow charts cut long legends).
        QCOMPARE(panel.convergenceChart()->chart()->legend()->markers().size(), 2);   // best so far, population mean
        // The keyboard drives it too.
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_End);
        QCOMPARE(pareto->generation(), o.generations);
        QTest::keyClick(slider, Qt::Key_Left);
        QCOMPARE(pareto->generation(), o.generations - 1);
        // Hover values: the Pareto point's config and numbers, the convergence line's value.
        const std::size_t someone = r->populations[3].back();
        const QString hover = pareto->pointText(someone);
        QVERIFY2(hover.contains(QString::number(r->evaluated[someone].accuracy, 'f', 3)) && hover.contains(QStringLiteral("resolution")) &&
                     hover.contains(QStringLiteral("crossover child")),
                 qPrintable(hover));
        QCOMPARE(panel.convergenceChart()->valueText(0, 3.2),
                 QStringLiteral("best so far — generation 3: %1").arg(r->history[3].best, 0, 'f', 3));

        // Play from the last generation: it starts again at 0 and stops at the last, every generation shown once.
        slider->setValue(o.generations);
        QSignalSpy shown(panel.playback(), &ui::SearchPlayback::generationChanged);
        QTest::mouseClick(panel.playback()->playButton(), Qt::LeftButton);
        QVERIFY(panel.playback()->playing());
        QTRY_VERIFY_WITH_TIMEOUT(!panel.playback()->playing(), 20000);
        QCOMPARE(shown.size(), o.generations + 1);
        for (int g = 0; g <= o.generations; ++g) QCOMPARE(shown[g].front().toInt(), g);
        QCOMPARE(pareto->generation(), o.generations);

        // A click on a mutation child of generation 3 loads the subnet under the cursor into AppState.
        slider->setValue(3);
        panel.resize(1500, 950);
        panel.QWidget::show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QScatterSeries* target = nullptr;
        std::size_t targetIndex = 0;
        for (const auto& [series, candidates] : pareto->scatterSeries())
            if (series->name().contains(QStringLiteral("mutation"))) target = series, targetIndex = candidates.front();
        QVERIFY(target);
        QChart* chart = pareto->view()->chart();
        const QPointF at = target->points().front();
        const QPoint pixel = pareto->view()->mapFromScene(chart->mapToScene(chart->mapToPosition(at, target)));
        state.setSubnet(ArchSampler(state.space()).minConfig(state.space().resolutions.front()));
        QSignalSpy clicked(pareto, &ui::ParetoChart::candidateClicked);
        QSignalSpy message(&state, &ui::AppState::message);
        QTest::mouseClick(pareto->view()->viewport(), Qt::LeftButton, {}, pixel);
        QCOMPARE(clicked.size(), 1);
        const auto index = clicked.front().front().value<std::size_t>();
        const SearchCandidate& hit = r->evaluated[index];
        // The topmost point there: the mutation child or one drawn at the same place.
        const QPointF hitAt = chart->mapToPosition(QPointF(hit.cost.millionMacs(), hit.accuracy), target);
        QVERIFY(index == targetIndex || QLineF(hitAt, chart->mapToPosition(at, target)).length() <= 8);
        QVERIFY(state.subnet() == hit.config);
        QCOMPARE(message.size(), 1);
        QVERIFY2(message.front().front().toString().startsWith(QStringLiteral("Loaded into the Design-space panel")),
                 qPrintable(message.front().front().toString()));
        QVERIFY(panel.statusText().contains(QStringLiteral("Loaded into the Design-space panel")));

        // A new run (live mode's re-runs too) is shown at its last generation, paused.
        slider->setValue(1);
        panel.startSearch(false);
        QVERIFY(finished.wait(30000));
        QCOMPARE(slider->value(), o.generations);
        QCOMPARE(pareto->generation(), o.generations);
        QVERIFY(!panel.playback()->playing());
        r = panel.lastResult();
        QCOMPARE(pareto->populationShown(), r->populations.back());

        // Re-opened from the history, the run plays back the same populations and origins.
        ui::SearchPanel reopened(&state, historyPath);
        reopened.reopen(0);
        const SearchResult* back = reopened.lastResult();
        QVERIFY(back && back->populations.size() == r->populations.size());
        QCOMPARE(reopened.playback()->generation(), o.generations);
        reopened.playback()->setGeneration(2);
        ui::ParetoChart* backChart = reopened.paretoChart();
        QVERIFY(backChart->populationRecorded());
        QCOMPARE(backChart->mutationShown(), mutations);
        QCOMPARE(backChart->populationShown().size(), r->populations[2].size());
        for (std::size_t k = 0; k < r->populations[2].size(); ++k)
            QCOMPARE(back->evaluated[backChart->populationShown()[k]].accuracy, r->evaluated[r->populations[2][k]].accuracy);
        // A point the record kept no config for says so instead of loading anything.
        std::size_t noConfig = back->evaluated.size();
        for (std::size_t i = 0; i < back->evaluated.size() && noConfig == back->evaluated.size(); ++i)
            if (!back->evaluated[i].hasConfig()) noConfig = i;
        QVERIFY(noConfig < back->evaluated.size());
        const SubnetConfig before = state.subnet();
        QVERIFY(!reopened.loadCandidate(noConfig));
        QVERIFY(state.subnet() == before);
        QVERIFY(reopened.statusText().contains(QStringLiteral("kept no config")));

        // A run stored before playback (no populations, no origins) opens and shows each generation's points.
        Json old = readJsonFile(historyPath.toStdString());
        old["runs"][0]["result"]["sample"].erase("populations");
        for (Json& row : old["runs"][0]["result"]["sample"]["rows"]) row.erase(row.size() - 1);
        const QString oldPath = tmp.path() + QStringLiteral("/playback-old.json");
        writeJsonFile(oldPath.toStdString(), old);
        ui::SearchPanel older(&state, oldPath);
        older.reopen(0);
        older.playback()->setGeneration(2);
        QVERIFY(!older.paretoChart()->populationRecorded());
        QVERIFY2(older.paretoChart()->summary().contains(QStringLiteral("did not record origins or populations")),
                 qPrintable(older.paretoChart()->summary()));
        std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, double>> inGen2, shownGen2;
        for (const SearchCandidate& c : r->evaluated)
            if (c.generation == 2) inGen2.insert({c.cost.macs, c.cost.peak_activation_bytes, c.cost.params, c.accuracy});
        for (std::size_t i : older.paretoChart()->populationShown()) {
            const SearchCandidate& c = older.lastResult()->evaluated[i];
            QCOMPARE(c.generation, 2);
            shownGen2.insert({c.cost.macs, c.cost.peak_activation_bytes, c.cost.params, c.accuracy});
        }
        QCOMPARE(shownGen2, inGen2);
        QCOMPARE(older.paretoChart()->populationShown().size(), inGen2.size());
    }

    void reopeningARunRestoresItsSpace()
    {
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::SearchPanel panel(&state, tmp.path() + QStringLiteral("/reopen-space.json"));
        prepareSearch(panel, state, 10, 4);
        panel.setLimit("millionMACs", 60, true);
        panel.setLimit("KBPeakMemory", 250, true);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(true);
        QVERIFY(finished.wait(30000));
        const std::string limits = panel.lastResult()->constraints.describe();
        state.setSpace(presetSpace("mcunet-fmnist"), QStringLiteral("mcunet-fmnist"));
        panel.reopen(0);
        QCOMPARE(state.space().name, std::string("mcunet-vww"));
        QCOMPARE(panel.constraints().describe(), limits);
        QCOMPARE(panel.constraints().find("millionMACs")->max, 60.0);
    }

    // Issue 19: live mode switched itself off once a search took 100 ms or more (with the
    // fine-tuning limit on: 222 ms), so moving a limit did nothing. A slow search re-runs too.
    void movingALimitReRunsASlowSearchToo()
    {
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));   // the lab's space
        ui::SearchPanel panel(&state, tmp.path() + QStringLiteral("/slow-live.json"));
        prepareSearch(panel, state, 100, 50);
        panel.setTrainingLimit(300, QStringLiteral("bias-only:12+pw1:3@1/4"), true);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(false);
        QVERIFY(finished.wait(120000));
        // The case in question: a search of 100 ms or more (about 1 s on the 2-core machine).
        QVERIFY2(panel.lastResult()->seconds >= 0.1, qPrintable(QString::number(panel.lastResult()->seconds)));
        finished.clear();
        auto* spin = panel.findChildren<QDoubleSpinBox*>().at(1);   // the peak-SRAM limit
        spin->setValue(150);
        QVERIFY2(finished.wait(120000), qPrintable(panel.statusText()));
        QCOMPARE(panel.lastResult()->constraints.find("KBPeakMemory")->max, 150.0);
        QVERIFY(panel.lastResult()->best.cost.peak_activation_bytes <= 150 * 1024);
        QVERIFY2(panel.statusText().contains(QStringLiteral("re-run live")), qPrintable(panel.statusText()));
    }

    // The fine-tuning limit for TinyEngine on a board: an empty pattern is the best scheme per
    // subnet there (and an error with the memory-only trainer); a stored run brings back the
    // trainer, the board and the pattern.
    void searchLimitsFormTrainsOnTinyEngineOnABoard()
    {
        const DesignSpace te = presetSpace("mcunet-fmnist-te");
        ui::AppState state;
        state.setSpace(te, QStringLiteral("mcunet-fmnist-te"));
        ui::SearchLimitsForm form(&state);
        auto* trainer = form.findChild<QComboBox*>(QStringLiteral("trainer"));
        auto* board = form.findChild<QComboBox*>(QStringLiteral("board"));
        auto* pattern = form.findChild<QLineEdit*>(QStringLiteral("trainingPattern"));
        auto* note = form.findChild<QLabel*>(QStringLiteral("trainingNote"));
        QVERIFY(trainer && board && pattern && note);
        QCOMPARE(form.trainer(), ui::SearchLimitsForm::Trainer::AnyRuntime);   // today's behaviour by default
        QCOMPARE(form.boardName(), QStringLiteral("stm32f746"));
        QCOMPARE(form.boardNames(), QStringList({QStringLiteral("nrf52840"), QStringLiteral("stm32f411"), QStringLiteral("stm32f746"),
                                                  QStringLiteral("stm32h743")}));
        QVERIFY2(!board->isEnabled(), "the board is only chosen for TinyEngine");

        // Memory only: an empty pattern is an error, as before.
        form.setTrainingLimit(96, QString(), true);
        QVERIFY_THROWS_EXCEPTION(InputError, form.constraints());
        QVERIFY2(note->text().contains(QStringLiteral("empty term")), qPrintable(note->text()));

        // TinyEngine: the same empty pattern means the best scheme per subnet.
        QSignalSpy edited(&form, &ui::SearchLimitsForm::edited);
        trainer->setCurrentIndex(trainer->findText(QStringLiteral("TinyEngine on a board")));   // as the user picks it
        QCOMPARE(edited.size(), 1);
        QCOMPARE(form.trainer(), ui::SearchLimitsForm::Trainer::TinyEngine);
        QVERIFY(board->isEnabled());
        QVERIFY2(pattern->placeholderText().contains(QStringLiteral("best per subnet")), qPrintable(pattern->placeholderText()));
        QVERIFY2(note->text().contains(QStringLiteral("the best scheme per subnet")) && note->text().contains(QStringLiteral("stm32f746")),
                 qPrintable(note->text()));
        const Constraints c = form.constraints();
        QVERIFY(!c.find(TrainingMemoryLimit::kKey));
        const Limit* l = c.find(TinyEngineTrainingLimit::kKey);
        QVERIFY(l);
        QCOMPARE(l->max, 96.0);
        QCOMPARE(l->quantity->definition["pattern"].get<std::string>(), std::string("best"));
        QCOMPARE(l->quantity->definition["board"]["name"].get<std::string>(), std::string("stm32f746"));
        QCOMPARE(l->quantity->definition["board"], presetBoard("stm32f746").toJson());
        // It is TinyEngineTrainingLimit's quantity: on the smallest subnet it measures what one built
        // directly measures (the best scheme's total in KB), and it is kept while nothing changes.
        const SubnetConfig smallest = ArchSampler(te).minConfig(te.resolutions.front());
        const TinyEngineTrainingPlan plan = TinyEngineTrainingLimit(te, presetBoard("stm32f746"), "", 96).plan(smallest);
        QVERIFY2(plan.trainable, plan.refusal.c_str());
        const CostSummary cost = CostModel(te).summary(smallest);
        QCOMPARE(l->quantity->measure(smallest, cost), static_cast<double>(plan.totalBytes()) / 1024.0);
        QCOMPARE(form.constraints().find(TinyEngineTrainingLimit::kKey)->quantity.get(), l->quantity.get());
        // The budget chooses the scheme: another budget is another limit.
        form.setTrainingLimit(150, QString(), true);
        QVERIFY(form.constraints().find(TinyEngineTrainingLimit::kKey)->quantity.get() != l->quantity.get());
        QCOMPARE(form.constraints().find(TinyEngineTrainingLimit::kKey)->max, 150.0);

        // A pattern given and another board.
        board->setCurrentIndex(board->findText(QStringLiteral("stm32h743")));
        form.setTrainingLimit(150, QStringLiteral("bias-only:6+pw1:2@1"), true);
        const Constraints given = form.constraints();
        const ConstraintQuantity& q = *given.find(TinyEngineTrainingLimit::kKey)->quantity;
        QCOMPARE(q.definition["pattern"].get<std::string>(), std::string("bias-only:6+pw1:2@1"));
        QCOMPARE(q.definition["board"]["name"].get<std::string>(), std::string("stm32h743"));
        form.setTrainingLimit(150, QStringLiteral("pw1:2@1/3"), true);
        QVERIFY_THROWS_EXCEPTION(InputError, form.constraints());

        // A stored run (as SearchPanel::reopen restores it) brings back the trainer, the board and "best" as an empty pattern.
        Constraints run;
        run.set("millionMACs", 20);
        run.set(TinyEngineTrainingLimit(te, presetBoard("stm32h743"), "", 120).quantity(), 120);
        const Constraints stored = TrainingMemoryLimit::restore(te, run.toJson(), run.definitions(), "history");
        ui::SearchLimitsForm fresh(&state);
        QSignalSpy freshEdited(&fresh, &ui::SearchLimitsForm::edited);
        fresh.setConstraints(stored, QString());
        QCOMPARE(freshEdited.size(), 0);   // restored, not edited
        QCOMPARE(fresh.trainer(), ui::SearchLimitsForm::Trainer::TinyEngine);
        QCOMPARE(fresh.boardName(), QStringLiteral("stm32h743"));
        QCOMPARE(fresh.findChild<QLineEdit*>(QStringLiteral("trainingPattern"))->text(), QString());
        QVERIFY(fresh.findChild<QComboBox*>(QStringLiteral("board"))->isEnabled());
        const Constraints back = fresh.constraints();
        QCOMPARE(back.toJson(), run.toJson());
        QCOMPARE(back.definitions(), run.definitions());
        QCOMPARE(back.describe(), run.describe());
        // With a pattern, then a memory-only run: the trainer follows the run.
        Constraints withPattern;
        withPattern.set(TinyEngineTrainingLimit(te, presetBoard("nrf52840"), "bias-only:6", 64).quantity(), 64);
        fresh.setConstraints(TrainingMemoryLimit::restore(te, withPattern.toJson(), withPattern.definitions(), "history"), QString());
        QCOMPARE(fresh.boardName(), QStringLiteral("nrf52840"));
        QCOMPARE(fresh.constraints().definitions(), withPattern.definitions());
        Constraints memoryOnly;
        memoryOnly.set(TrainingMemoryLimit(te, "bias-only:4").quantity(), 200);
        fresh.setConstraints(memoryOnly, QStringLiteral("bias-only:4"));
        QCOMPARE(fresh.trainer(), ui::SearchLimitsForm::Trainer::AnyRuntime);
        QVERIFY(!fresh.findChild<QComboBox*>(QStringLiteral("board"))->isEnabled());
        QCOMPARE(fresh.constraints().definitions(), memoryOnly.definitions());
        QVERIFY(!fresh.constraints().find(TinyEngineTrainingLimit::kKey));
        QVERIFY_THROWS_EXCEPTION(InputError, fresh.setTrainer(ui::SearchLimitsForm::Trainer::TinyEngine, QStringLiteral("no-such-board")));
    }

    // A stored TinyEngine run (no search: the trainable space has no shipped predictor yet): the
    // winner card's TinyEngine line, and "Use this subnet" handing the winner's scheme to the
    // Training inspector after the subnet is set.
    void useThisSubnetHandsTheTinyEngineSchemeToTheInspector()
    {
        const DesignSpace te = presetSpace("mcunet-fmnist-te");
        const SubnetConfig smallest = ArchSampler(te).minConfig(te.resolutions.front());
        const BoardProfile board = presetBoard("stm32f746");
        TinyEngineTrainingLimit limit(te, board, "", 96);
        const TinyEngineTrainingPlan plan = limit.plan(smallest);
        QVERIFY2(plan.trainable, plan.refusal.c_str());
        QVERIFY2(plan.scheme.find('+') != std::string::npos, plan.scheme.c_str());   // a multi-term pattern
        SearchResult r;
        r.constraints.set(limit.quantity(), 96);
        r.oracle = "stored for the test";
        r.best.config = smallest;
        r.best.cost = CostModel(te).summary(smallest);
        r.best.accuracy = 80;
        r.best_reports[TinyEngineTrainingLimit::kReportKey] = limit.quantity()->report(smallest, 96);
        r.found = true;
        r.evaluated = {r.best};
        r.history = {GenerationStats{}};
        const QString historyPath = tmp.path() + QStringLiteral("/tinyengine-history.json");
        SearchHistory(historyPath.toStdString()).add(SearchRunRecord::fromResult(r, te.name, "2025-01-01T00:00:00"));

        ui::AppState state;
        state.setSpace(te, QStringLiteral("mcunet-fmnist-te"));
        state.setSubnet(ArchSampler(te).labMaxConfig(te.resolutions.back()));
        ui::SearchPanel panel(&state, historyPath);
        ui::TrainingInspectorPanel inspector(&state);
        // MainWindow's hand-off.
        QObject::connect(&panel, &ui::SearchPanel::winnerSchemeChosen, &inspector, &ui::TrainingInspectorPanel::applySchemePattern);
        panel.reopen(0);
        QCOMPARE(panel.constraints().toJson(), r.constraints.toJson());
        QCOMPARE(panel.constraints().definitions(), r.constraints.definitions());
        QCOMPARE(panel.findChild<ui::SearchLimitsForm*>()->trainer(), ui::SearchLimitsForm::Trainer::TinyEngine);
        const QString line = QStringLiteral("trains on TinyEngine (stm32f746) with <tt>%1</tt>: inference working set %2 KB + extra %3 KB = "
                                            "<b>%4 KB</b> (budget 96.0 KB); device SRAM ≈ ledger %5 KB + 80 KB = %6 KB of 320 KB; %7 parameters updated")
                                 .arg(QString::fromStdString(plan.scheme))
                                 .arg(plan.inference_peak_bytes / 1024.0, 0, 'f', 1)
                                 .arg(plan.extra_bytes / 1024.0, 0, 'f', 1)
                                 .arg(plan.totalBytes() / 1024.0, 0, 'f', 1)
                                 .arg(plan.ledger_peak_bytes / 1024.0, 0, 'f', 1)
                                 .arg((plan.ledger_peak_bytes + 80 * 1024) / 1024.0, 0, 'f', 1)
                                 .arg(QString::fromStdString(groupThousands(plan.updated_parameters)));
        bool shown = false;
        QString texts;
        for (QLabel* l : panel.findChildren<QLabel*>()) {
            shown = shown || l->text().contains(line);
            if (l->text().contains(QStringLiteral("Winner"))) texts += l->text();
        }
        QVERIFY2(shown, qPrintable(texts + QStringLiteral("\nexpected: ") + line));

        QSignalSpy chosen(&panel, &ui::SearchPanel::winnerSchemeChosen);
        QSignalSpy used(&panel, &ui::SearchPanel::subnetUsed);
        panel.useWinner();
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.front().front().toString(), QString::fromStdString(plan.scheme));
        QCOMPARE(used.size(), 1);
        QVERIFY(state.subnet() == smallest);
        // The inspector shows the winner (the design-space subnet) with the winner's scheme, one undoable step.
        QCOMPARE(inspector.currentModel(), ui::inspectorSubnetKey());
        const Network net = networkFromSubnet(te, smallest, "design-space subnet");
        QCOMPARE(inspector.layerModel()->network().convLayers().size(), net.convLayers().size());
        const ResolvedScheme want = loadScheme(plan.scheme, &net).resolve(net);
        std::string diff = schemeDifference(inspector.layerModel()->scheme(), want);
        QVERIFY2(diff.empty(), diff.c_str());
        QCOMPARE(inspector.layerModel()->undoStack()->undoText(), QStringLiteral("scheme %1").arg(QString::fromStdString(plan.scheme)));

        // Called directly: any pattern export takes, on the current subnet; undo goes back.
        const ResolvedScheme before = inspector.layerModel()->scheme();
        for (const char* p : {"bias-only:9+pw1:2@1/4", "classifier", "bias-only:3"}) {
            QVERIFY2(inspector.applySchemePattern(QString::fromLatin1(p)), p);
            diff = schemeDifference(inspector.layerModel()->scheme(), loadScheme(p, &net).resolve(net));
            QVERIFY2(diff.empty(), (std::string(p) + ": " + diff).c_str());
        }
        QVERIFY(!inspector.applySchemePattern(QStringLiteral("pw1:2@1/3")));   // refused, the scheme unchanged
        diff = schemeDifference(inspector.layerModel()->scheme(), loadScheme("bias-only:3", &net).resolve(net));
        QVERIFY2(diff.empty(), diff.c_str());
        for (int i = 0; i < 3; ++i) inspector.layerModel()->undoStack()->undo();
        diff = schemeDifference(inspector.layerModel()->scheme(), before);
        QVERIFY2(diff.empty(), diff.c_str());
    }
};

QTEST_MAIN(TestSearchPanels)
#include "test_search_panels.moc"
