// Guided tours (core/tour/Tour.h, ui/TourPanel, docs/TOURS.md): every shipped tour plays headless
// from its first step to its last, each step's actions succeed and leave the window in the state
// the step describes; tour files with mistakes are refused naming the file, the field and the reason.
#include "TestSupport.h"

#include "AppState.h"
#include "CompressPanel.h"
#include "DesignSpacePanel.h"
#include "FineTunePane.h"
#include "TrainingGraphPane.h"
#include "MainWindow.h"
#include "SearchPanel.h"
#include "TourDriver.h"
#include "TourPanel.h"
#include "TrainingInspectorPanel.h"
#include "TrainingLayerModel.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "data/ImageDataset.h"
#include "graph/PublishedSchemes.h"
#include "graph/SparseScheme.h"
#include "io/AtomicFile.h"
#include "space/ArchSampler.h"
#include "space/DesignSpace.h"
#include "tour/Tour.h"
#include "zoo/Network.h"

#include <QApplication>
#include <QDockWidget>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {

// The message parseTour throws for `text`, or "" when it parses.
std::string tourError(const std::string& text)
{
    try {
        parseTour(parseJson(text, "t.json"), "t.json", "t");
        return "";
    } catch (const InputError& e) {
        return e.what();
    }
}

bool sameScheme(const ResolvedScheme& a, const ResolvedScheme& b)
{
    if (a.n_bias_update != b.n_bias_update || a.first_updated != b.first_updated || a.numConvs() != b.numConvs()) return false;
    for (int i = 0; i < a.numConvs(); ++i)
        if (a.conv(i).bias != b.conv(i).bias || a.conv(i).k != b.conv(i).k) return false;
    return true;
}

void writeText(const QString& path, const std::string& text) { writeFileAtomic(path.toStdString(), text); }

std::string withStep(const std::string& action)
{
    return R"({"format": "tinyscope-tour/1", "title": "T", "steps": [{"title": "S", "text": "x", "do": [)" + action + "]}]}";
}

}  // namespace

class TestTours : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

    // Plays step `k` (already started) to its end; fails the test naming the step and the message.
    static void waitForStep(ui::TourPanel* panel, int k)
    {
        if (panel->busy()) {
            QSignalSpy done(panel, &ui::TourPanel::stepDone);
            QVERIFY2(done.wait(120000), qPrintable(QStringLiteral("step %1 still running after 120 s").arg(k + 1)));
        }
        QVERIFY2(panel->lastStepOk(), qPrintable(QStringLiteral("%1, step %2: %3").arg(QString::fromStdString(panel->tour().id)).arg(k + 1).arg(panel->statusText())));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("tinyscope"));
        QCoreApplication::setApplicationName(QStringLiteral("tinyscope"));
        QVERIFY(tmp.isValid());
        qputenv("XDG_STATE_HOME", (tmp.path() + QStringLiteral("/state")).toLocal8Bit());   // the Compress panel's saved subnets
    }

    void shippedToursAreValidAndOrdered()
    {
        const std::vector<std::string> names = shippedTourNames();
        QCOMPARE(names, (std::vector<std::string>{"lab3", "tiny-training", "deployment", "compression"}));
        for (const std::string& n : names) {
            const Tour t = shippedTour(n);
            QCOMPARE(t.id, n);
            QVERIFY(!t.title.empty());
            QVERIFY(t.steps.size() >= 4);
            // Every highlight names a part of the window the driver knows.
            for (const TourStep& s : t.steps)
                for (const TourAction& a : s.actions)
                    if (a.action == "highlight")
                        QVERIFY2(ui::TourDriver::targetNames().contains(QString::fromStdString(a.args["target"].get<std::string>())), a.where.c_str());
        }
        // The tours live in resources/tours/ as files a lecturer can copy and edit.
        const Tour fromFile = readTourFile(std::string(TINYSCOPE_SOURCE_DIR) + "/resources/tours/lab3.json");
        QCOMPARE(fromFile.steps.size(), shippedTour("lab3").steps.size());
        QCOMPARE(loadTour(std::string(TINYSCOPE_SOURCE_DIR) + "/resources/tours/lab3.json").title, fromFile.title);
    }

    void mistakesAreNamed()
    {
        QCOMPARE(tourError(withStep(R"({"action": "panel", "panel": "search"})")), std::string());
        QCOMPARE(tourError(withStep(R"({"action": "pannel", "panel": "search"})")),
                 std::string("t.json: steps[0].do[0].action: unknown action 'pannel' (actions: [workspace, panel, subnet, subnet-edit, highlight, "
                             "search, use-winner, deploy-dialog, model, scheme, inspector-tab, budget, export-dialog, close-dialogs, "
                             "compress-settings, compress-page, compress-run, compress-deploy])"));
        QCOMPARE(tourError(withStep(R"({"action": "panel", "panel": "graphs"})")),
                 std::string("t.json: steps[0].do[0].panel: expected one of [design-space, predictor, search, training, compress], got 'graphs'"));
        QCOMPARE(tourError(withStep(R"({"action": "panel"})")), std::string("t.json: steps[0].do[0]: action 'panel' needs 'panel' (the panel)"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "macs": 60})")),
                 std::string("t.json: steps[0].do[0]: action 'search' has no argument 'macs' (arguments: [algorithm, macs_m, sram_kb, population, "
                             "generations, seed])"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "macs_m": "sixty"})")).rfind("t.json: steps[0].do[0].macs_m: ", 0), 0u);
        QCOMPARE(tourError(withStep(R"({"action": "scheme", "bias_only": 4, "full": true})")),
                 std::string("t.json: steps[0].do[0]: action 'scheme' takes exactly 1 of its arguments, got 2"));
        QCOMPARE(tourError(withStep(R"({"action": "subnet-edit"})")),
                 std::string("t.json: steps[0].do[0]: action 'subnet-edit' takes at least 1 of its arguments, got 0"));
        QCOMPARE(tourError(R"({"format": "tinyscope-tour/2", "title": "T", "steps": []})"),
                 std::string("t.json: format: expected \"tinyscope-tour/1\", got \"tinyscope-tour/2\""));
        QCOMPARE(tourError(R"({"format": "tinyscope-tour/1", "title": "T", "steps": []})"), std::string("t.json: steps: a tour needs at least one step"));
        QVERIFY_THROWS_EXCEPTION(InputError, shippedTour("lab4"));
        // A file that is not JSON: the file, line and column.
        const QString bad = tmp.path() + QStringLiteral("/bad.json");
        writeText(bad, "{\"format\": ");
        try {
            readTourFile(bad.toStdString());
            QFAIL("a truncated tour was read");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).rfind(bad.toStdString() + ": line 1", 0) == 0, e.what());
        }
    }

    // Values are checked as the commands they drive would check them (issue 45): a highlight target
    // the window does not have, a workspace that is not shipped, search options and limits outside
    // the search's ranges, a budget outside the inspector's field; quoted values are escaped.
    void valuesAreCheckedAsTheCommandsWould()
    {
        QCOMPARE(tourError(withStep(R"({"action": "highlight", "target": "nowhere"})")),
                 std::string("t.json: steps[0].do[0].target: expected one of [subnet-controls, cost-totals, subnet-diagram, layer-costs, "
                             "peak-chart, evaluation, predictor-card, predictor-scatter, search-limits, search-options, pareto-chart, "
                             "convergence-chart, winner-card, run-history, inspector-toolbar, memory-cards, memory-chart, scheme-table, "
                             "training-graph, fine-tune, sensitivity-curves, parameter-bars, sparsity-table, weight-histogram, "
                             "channel-speedup, bit-width-accuracy, kmeans-view], got 'nowhere'"));
        // The Compress panel's jobs take what their job uses, bit widths as the panel reads them.
        QCOMPARE(tourError(withStep(R"({"action": "compress-run", "job": "quantize", "bits": "8,4,2"})")), std::string());
        QCOMPARE(tourError(withStep(R"({"action": "compress-run", "job": "quantize", "bits": "8,16"})")),
                 std::string("t.json: steps[0].do[0].bits: '16' is not a bit width: give whole numbers 1–8, e.g. 8,4,2"));
        QCOMPARE(tourError(withStep(R"({"action": "compress-run", "job": "scan", "ratio": 0.3})")),
                 std::string("t.json: steps[0].do[0].ratio: only the channels job takes ratio"));
        QCOMPARE(tourError(withStep(R"({"action": "compress-run", "job": "channels", "ratio": 0.99})")),
                 std::string("t.json: steps[0].do[0].ratio: must be in 0..0.95, got 0.99"));
        QCOMPARE(tourError(withStep(R"({"action": "workspace", "name": "../../../etc/passwd"})")),
                 std::string("t.json: steps[0].do[0].name: expected one of [fashion-mnist, fashion-mnist-te, lab3-vww], got '../../../etc/passwd'"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "population": 1e9, "generations": 1e9})")),
                 std::string("t.json: steps[0].do[0]: search options: population must be in 1..100000, got 1000000000"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "generations": 1e9})")),
                 std::string("t.json: steps[0].do[0]: search options: generations must be in 0..1000000, got 1000000000"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "population": 100000, "generations": 1000000})")),
                 std::string("t.json: steps[0].do[0]: search options: population × (generations + 1) exceeds 100,000,000 subnets"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "population": 1e12})")), std::string("t.json: steps[0].do[0].population: integer out of range: 1000000000000"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "seed": -1})")), std::string("t.json: steps[0].do[0].seed: must be in 0..4294967295, got -1"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "seed": 4294967296})")),
                 std::string("t.json: steps[0].do[0].seed: must be in 0..4294967295, got 4294967296"));
        QCOMPARE(tourError(withStep(R"({"action": "search", "macs_m": -5})")),
                 std::string("t.json: steps[0].do[0]: millionMACs: a limit must be a positive number, got -5"));
        QCOMPARE(tourError(withStep(R"({"action": "budget", "kb": -1})")), std::string("t.json: steps[0].do[0].kb: must be in 1..100000, got -1"));
        QCOMPARE(tourError(withStep(R"({"action": "budget", "kb": 1e9})")), std::string("t.json: steps[0].do[0].kb: must be in 1..100000, got 1000000000.0"));
        QCOMPARE(tourError(withStep(R"({"action": "subnet-edit", "ks": -3})")), std::string("t.json: steps[0].do[0].ks: must be at least 1, got -3"));
        QCOMPARE(tourError(withStep(R"({"action": "scheme", "bias_only": -4})")), std::string("t.json: steps[0].do[0].bias_only: must be at least 0, got -4"));
        // What the shipped tours use stays valid.
        QCOMPARE(tourError(withStep(R"({"action": "search", "algorithm": "evolution", "macs_m": 60, "sram_kb": 250, "population": 50, "generations": 20, "seed": 0})")),
                 std::string());
        QCOMPARE(tourError(withStep(R"({"action": "budget", "kb": 256})")), std::string());
        // A hostile value is quoted escaped: no control character reaches the terminal.
        const std::string hostile = tourError(withStep(R"({"action": "pa\u001bnel"})"));
        QVERIFY2(hostile.find("unknown action 'pa\\x1bnel'") != std::string::npos, hostile.c_str());
        QCOMPARE(tourError(withStep(R"({"action": "panel", "panel": "x\ny"})")), std::string("t.json: steps[0].do[0].panel: expected one of [design-space, predictor, search, training, compress], got 'x\\ny'"));
        // The driver finds exactly the targets the core accepts.
        QStringList core;
        for (const std::string& t : tourHighlightTargets()) core << QString::fromStdString(t);
        QCOMPARE(ui::TourDriver::targetNames(), core);
    }

    // Lab 3: each step leaves the subnet, the costs and the search as the text says.
    void lab3PlaysToTheEnd()
    {
        ui::MainWindow w;
        w.resize(1280, 720);
        w.show();
        ui::TourPanel* panel = w.tourPanel();
        // Every target a tour may highlight is a widget of this window (the panels register them).
        for (const QString& name : ui::TourDriver::targetNames())
            QVERIFY2(panel->driver()->target(name) != nullptr, qPrintable(name));
        w.startTour(shippedTour("lab3"));
        QVERIFY(w.tourDock()->isVisible());
        std::int64_t macsBefore = 0;
        for (int k = 0; k < panel->steps(); ++k) {
            if (k > 0) QVERIFY(panel->next());
            waitForStep(panel, k);
            const std::string title = panel->tour().steps[static_cast<std::size_t>(k)].title;
            const DesignSpace& space = w.state()->space();
            const SubnetConfig& c = w.state()->subnet();
            const std::int64_t macs = CostModel(space).summary(c).macs;
            if (k == 0) {
                QCOMPARE(space.name, std::string("mcunet-vww"));
                QCOMPARE(c.canonical(space), ArchSampler(space).minConfig(space.resolutions.front()).canonical(space));
                QCOMPARE(panel->driver()->highlightCount(), 1);
            }
            if (title == "Cost of the kernel") {
                for (std::size_t b = 0; b < c.ks.size(); ++b) QCOMPARE(c.ks[b], 7);
                QVERIFY(macs > macsBefore);   // depthwise MACs × 49/9
            }
            if (title == "Cost of resolution") QCOMPARE(c.image_size, 160);
            if (title.rfind("Evolution", 0) == 0) {
                const SearchResult* r = w.searchPanel()->lastResult();
                QVERIFY(r && r->found);
                QCOMPARE(r->options.population, 50);
                QCOMPARE(r->options.generations, 20);
                QVERIFY(r->best.cost.macs <= 60'000'000);
                QVERIFY(r->best.cost.peak_activation_bytes <= 250 * 1024);
                QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.searchPanel()));
            }
            macsBefore = macs;
        }
        QCOMPARE(panel->step(), panel->steps() - 1);
        QCOMPARE(w.state()->subnet(), w.searchPanel()->lastResult()->best.config);   // "use-winner"
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.designSpacePanel()));
        // Back replays the tour to the previous step: the same search, the same winner.
        const SubnetConfig winner = w.searchPanel()->lastResult()->best.config;
        QVERIFY(panel->back());
        waitForStep(panel, panel->step());
        QCOMPARE(w.searchPanel()->lastResult()->best.config, winner);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.searchPanel()));
    }

    // tiny-training: full update, bias-only, the published 49kb scheme, the graph and fine-tune tabs.
    void tinyTrainingPlaysToTheEnd()
    {
        ui::MainWindow w;
        w.resize(1280, 720);
        w.show();
        ui::TourPanel* panel = w.tourPanel();
        w.startTour(shippedTour("tiny-training"));
        ui::TrainingInspectorPanel* ti = w.trainingInspectorPanel();
        std::int64_t fullExtra = 0;
        for (int k = 0; k < panel->steps(); ++k) {
            if (k > 0) QVERIFY(panel->next());
            waitForStep(panel, k);
            QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(ti));
            QCOMPARE(ti->currentModel(), QStringLiteral("mcunet-5fps"));
            const Network& net = ti->layerModel()->network();
            const std::int64_t extra = ti->layerModel()->ledger().extra.total();
            if (k == 0) {
                QCOMPARE(ti->budgetKB(), 256.0);
                QVERIFY(sameScheme(ti->layerModel()->scheme(), SparseScheme::lastLayers(net, net.numBackboneConvs()).resolve(net)));
                fullExtra = extra;
            }
            if (k == 1) {
                QVERIFY(sameScheme(ti->layerModel()->scheme(), SparseScheme::biasOnly(12).resolve(net)));
                QVERIFY(extra * 10 < fullExtra);   // "orders of magnitude"
            }
            if (k == 2) {
                const std::vector<PublishedScheme> published = publishedSchemesFor("mcunet-5fps");
                auto p = std::find_if(published.begin(), published.end(), [](const PublishedScheme& s) { return s.name == "49kb"; });
                QVERIFY(p != published.end());
                QVERIFY(sameScheme(ti->layerModel()->scheme(), p->scheme.resolve(net)));
            }
            if (k == 3) QCOMPARE(ti->rightTabs()->currentWidget(), static_cast<QWidget*>(ti->graphPane()));
        }
        QCOMPARE(ti->rightTabs()->currentWidget(), static_cast<QWidget*>(ti->fineTunePane()));
        QCOMPARE(panel->driver()->highlightCount(), 1);
        panel->stop();
        QCOMPARE(panel->driver()->highlightCount(), 0);
    }

    // Deployment: a search, the Deploy dialog, the TinyEngine export dialog; the last step closes them.
    void deploymentPlaysToTheEnd()
    {
        ui::MainWindow w;
        w.resize(1280, 720);
        w.show();
        ui::TourPanel* panel = w.tourPanel();
        w.startTour(shippedTour("deployment"));
        for (int k = 0; k < panel->steps(); ++k) {
            if (k > 0) QVERIFY(panel->next());
            waitForStep(panel, k);
            if (k == 0) {
                QCOMPARE(w.state()->space().name, std::string("mcunet-fmnist"));
                QVERIFY(w.searchPanel()->lastResult() && w.searchPanel()->lastResult()->found);
            }
            if (k == 1 || k == 2) QCOMPARE(panel->driver()->openDialogs(), 1);
        }
        QCOMPARE(panel->driver()->openDialogs(), 0);
    }

    void compressionPlaysToTheEnd()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        ui::MainWindow w;
        w.resize(1280, 720);
        w.show();
        ui::TourPanel* panel = w.tourPanel();
        ui::CompressPanel* c = w.compressPanel();
        w.startTour(shippedTour("compression"));
        for (int k = 0; k < panel->steps(); ++k) {
            if (k > 0) QVERIFY(panel->next());
            waitForStep(panel, k);
            const QString result = c->resultText();
            if (k == 0) {
                QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(c));
                QCOMPARE(w.state()->space().name, std::string("mcunet-fmnist"));
                QVERIFY2(result.startsWith(QStringLiteral("Dense top-1")) && result.contains(QStringLiteral("200 images")), qPrintable(result));
            }
            if (k == 2) QVERIFY2(result.contains(QStringLiteral("pruned")) && !result.contains(QStringLiteral("fine-tuning")), qPrintable(result));
            if (k == 3) QVERIFY2(result.contains(QStringLiteral("after 1 fine-tuning epoch(s)")), qPrintable(result));
            if (k == 4) QVERIFY2(result.contains(QStringLiteral("Latency")) && QFileInfo::exists(c->savedFolder(true) + QStringLiteral("/subnet.pth")), qPrintable(result));
            if (k == 7) QCOMPARE(panel->driver()->openDialogs(), 1);
            // The frames on screen are this step's only, also without returning to the event loop.
            int shown = 0;
            for (const QWidget* f : w.findChildren<QWidget*>(QStringLiteral("tourHighlight"))) shown += f->isVisible();
            QCOMPARE(shown, k == 7 || k == 8 ? 0 : 1);
        }
        QCOMPARE(panel->driver()->openDialogs(), 0);
    }

    // A lecturer's tour with a mistake only the running app can see: the step fails with the
    // file, the step, the action and the reason; the tour stays on that step.
    void aFailingStepSaysWhere()
    {
        const QString path = tmp.path() + QStringLiteral("/mine.json");
        writeText(path, withStep(R"({"action": "panel", "panel": "training"}, {"action": "model", "model": "resnet-1000"})"));
        ui::MainWindow w;
        QVERIFY(w.startTourFile(path));
        ui::TourPanel* panel = w.tourPanel();
        if (panel->busy()) QSignalSpy(panel, &ui::TourPanel::stepDone).wait(10000);
        QVERIFY(!panel->lastStepOk());
        QCOMPARE(panel->statusText().contains(path + QStringLiteral(": steps[0].do[1] (model): the Training inspector has no model 'resnet-1000'")), true);
        // An unknown highlight target is refused when the file is read (valuesAreCheckedAsTheCommandsWould);
        // the driver still names one that reaches it another way.
        Tour t = parseTour(parseJson(withStep(R"({"action": "highlight", "target": "winner-card"})"), "t.json"), "t.json", "t");
        t.steps[0].actions[0].args["target"] = "nowhere";
        w.startTour(t);
        if (panel->busy()) QSignalSpy(panel, &ui::TourPanel::stepDone).wait(10000);
        QVERIFY(!panel->lastStepOk());
        QVERIFY2(panel->statusText().contains(QStringLiteral("no part of the window is called 'nowhere'")), qPrintable(panel->statusText()));
    }
};

QTEST_MAIN(TestTours)
#include "test_tours.moc"
