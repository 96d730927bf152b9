// The Export dialog driven offscreen on the real MCUNet-5fps int8 weights and the 49kb scheme:
// Check runs off the GUI thread and lists the findings before anything is written, Write writes
// the three files; the faithful form lists its warnings; a strict refusal writes nothing. The real
// graph opened with its companion files reaches the graph view. Screenshots go to
// screenshots/ in the test's working folder.
#include "graph/PublishedSchemes.h"
#include "TestSupport.h"

#include "ExportDialog.h"
#include "TrainingGraphFile.h"
#include "SvgGraphView.h"
#include "io/JsonFile.h"
#include "viz/GraphvizRenderer.h"
#include "viz/TrainingGraphDot.h"

#include <QApplication>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {


QString screenshot(QWidget& w, const char* name)
{
    QDir().mkpath(QStringLiteral("screenshots"));
    const QString path = QStringLiteral("screenshots/") + QLatin1String(name);
    QCoreApplication::processEvents();   // the layout follows the status text's new height
    w.grab().save(path);
    return path;
}

ExportRequest realRequest(const char* scheme)
{
    ExportRequest rq;
    rq.model = ModelSource::zooWithParams("mcunet-5fps", test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
    const Network net = rq.model.network();
    rq.scheme = loadScheme(scheme, &net);
    rq.scheme_label = scheme;
    rq.name = "49kb-int8";
    return rq;
}

}  // namespace

class TestExportDialog : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void dialogChecksBeforeWritingAndWrites()
    {
        REQUIRE_SHARED();
        QTemporaryDir dir;
        ui::ExportDialog d(realRequest("mcunet-5fps/49kb"));
        d.setOutputFolder(dir.path());
        d.show();
        d.check();
        QVERIFY(d.busy());   // off the GUI thread: the call returned while the job runs
        QVERIFY(d.waitForIdle(120000));
        QVERIFY2(d.hasPlan(), qPrintable(d.statusText()));
        QCOMPARE(d.plan()->graph.liveOps(), 423);
        QCOMPARE(d.findingCount(), 0);
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());   // nothing written by Check
        screenshot(d, "export-dialog-49kb.png");
        d.write();
        QVERIFY(d.waitForIdle(60000));
        QCOMPARE(d.writtenFiles().size(), 3);
        QCOMPARE(readJsonFile((dir.path() + QStringLiteral("/49kb-int8-graph.json")).toStdString()),
                 readJsonFile(test::tinyengineRefPath("49kb-int8-graph.json").toStdString()));

        // The faithful form: its four x − zero_x subtracts are errors (TinyEngine's sub() has no
        // broadcasting), listed with the two warnings.
        d.setForm(ExportForm::Faithful);
        QVERIFY(!d.hasPlan());   // settings changed: the old plan is gone
        d.check();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY(d.hasPlan());
        QCOMPARE(d.findingCount(), 6);
        QVERIFY2(d.statusText().contains(QStringLiteral("4 error(s), 2 warning(s)")), qPrintable(d.statusText()));
        screenshot(d, "export-dialog-faithful.png");

        // A board: the 49kb scheme's 195,944 B of training SRAM do not fit the F411's 128 KB, and its
        // 513,151 B of parameters leave TinyEngine's code too little of its 512 KB of flash.
        d.setForm(ExportForm::Reference);
        d.setBoard(QStringLiteral("stm32f411"));
        QVERIFY(!d.hasPlan());
        d.check();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY(d.hasPlan());
        QCOMPARE(d.plan()->errors(), 1);
        QCOMPARE(d.findingCount(), 2);
        QVERIFY(d.plan()->findings[0].error() && d.plan()->findings[0].rule == "board-sram");
        QVERIFY(!d.plan()->findings[1].error() && d.plan()->findings[1].rule == "board-flash");
        QVERIFY2(d.statusText().contains(QStringLiteral("Board stm32f411: SRAM 195,944 of 131,072 B")), qPrintable(d.statusText()));
        screenshot(d, "export-dialog-board.png");
        d.setBoard(QString());
        d.check();
        QVERIFY(d.waitForIdle(120000));
        QCOMPARE(d.findingCount(), 0);
    }

    void strictRefusalWritesNothing()
    {
        REQUIRE_SHARED();
        QTemporaryDir dir;
        ui::ExportDialog d(realRequest("full"));
        d.setOutputFolder(dir.path());
        d.show();
        d.check();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY(d.hasPlan());
        QVERIFY(d.plan()->errors() > 0);
        screenshot(d, "export-dialog-findings.png");
        d.write();
        QVERIFY(d.waitForIdle(60000));
        QVERIFY(d.writtenFiles().isEmpty());
        QVERIFY(d.statusText().contains(QStringLiteral("--strict")));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
    }

    void fileStemWithAFolderPartIsRefused()
    {
        // The stem becomes file names inside the chosen folder: one with a folder part is refused
        // (as the CLI's --name), before the model is quantized, so nothing can land outside it.
        ExportRequest rq;
        rq.model = ModelSource::zoo("resnet-8");
        rq.scheme = SparseScheme::biasOnly(2);
        rq.name = "../../x";
        ui::ExportDialog d(rq);
        d.check();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY(!d.hasPlan());
        QVERIFY2(d.statusText().contains(QStringLiteral("export name ../../x")), qPrintable(d.statusText()));
    }

    void openedRealGraphReachesTheGraphView()
    {
        REQUIRE_SHARED();
        const QString path = test::tinyengineRefPath("49kb-int8-graph.json");
        QCOMPARE(ui::companionParams(path), test::tinyengineRefPath("full-int8-params.pkl"));
        QCOMPARE(ui::companionScales(path), test::tinyengineRefPath("scale.json"));
        const ImportedGraph im = ui::openTrainingGraph(path);
        QCOMPARE(int(im.graph.ops.size()), 423);
        QVERIFY(im.params.has_value());
        QCOMPARE(int(im.params->scales.size()), 86);
        TrainingGraphDotOptions o;
        o.title = "49kb-int8-graph.json (imported)";
        const std::string svg = renderDotToSvg(trainingGraphDot(im.graph, o));
        ui::SvgGraphView view;
        view.resize(1000, 700);
        view.setSvg(QByteArray::fromStdString(svg));
        view.show();
        QVERIFY(view.selectNode(QString::fromStdString(trainingGraphNodeName(im.graph, 296))));
        screenshot(view, "imported-49kb-graph.png");
    }
};

QTEST_MAIN(TestExportDialog)
#include "test_export_dialog.moc"
