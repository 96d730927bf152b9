// The GUI renders offscreen: `tinyscope gui --screenshot DIR` writes every panel, and the
// Design-space panel follows the shared selection (diagram, table, chart).
#include "ImageChecks.h"
#include "TestSupport.h"

#include "AppState.h"
#include "DesignSpacePanel.h"
#include "MainWindow.h"
#include "SvgGraphView.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

using namespace tinyscope;

using test::distinctColours;

class TestGui : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void screenshotCommandWritesEveryPanel()
    {
        QTemporaryDir dir;
        QProcess p;
        p.start(test::tinyscopeBinary(), {QStringLiteral("gui"), QStringLiteral("--screenshot"), dir.path()});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        for (const char* name : {"design-space", "design-space-min", "design-space-max", "design-space-random"}) {
            QImage img(dir.path() + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
            QVERIFY2(!img.isNull(), name);
            QVERIFY(img.width() >= 800 && img.height() >= 600);
            QVERIFY2(distinctColours(img) > 20, name);
        }
    }

    void panelFollowsTheSelectedSubnet()
    {
        ui::MainWindow w;
        ui::DesignSpacePanel* panel = w.designSpacePanel();
        panel->selectMin();
        QCOMPARE(panel->report().summary.macs, std::int64_t(8302128));
        QCOMPARE(panel->report().peak_layer, std::string("blocks.1"));
        auto* view = panel->findChild<ui::SvgGraphView*>();
        QVERIFY(view);
        // stem, block 0, 6 stage dividers, 10 blocks, mix, head, input
        QVERIFY2(view->nodeNames().contains(QStringLiteral("b10")), qPrintable(view->nodeNames().join(QLatin1Char(','))));
        QVERIFY(!view->nodeNames().contains(QStringLiteral("b11")));
        panel->selectLabMax();
        QCOMPARE(panel->report().summary.macs, std::int64_t(79416432));
        QVERIFY(view->nodeNames().contains(QStringLiteral("b20")));
        QVERIFY(view->selectNode(QStringLiteral("b20")));
    }
};

QTEST_MAIN(TestGui)
#include "test_gui.moc"
