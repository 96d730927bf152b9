// Issue 47 "Fit and readability": the window fills a small screen, dialogs fit the screen, the
// mouse wheel changes only a focused control (it scrolls the panel otherwise), and the screenshot
// tool's fit set (tinyscope-screenshots --fit: every panel and dialog at 1280×720, normal and
// presentation mode, checked over the widget tree) finds nothing cut off in the layouts it covers.
#include "TestSupport.h"

#include "DesignSpacePanel.h"
#include "EvaluationOptions.h"
#include "MainWindow.h"
#include "ScreenFit.h"
#include "WheelGuard.h"

#include <QComboBox>
#include <QDialog>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QWheelEvent>
#include <QtTest>

using namespace tinyscope;

namespace {

QScrollArea* scrollAreaOf(QWidget* w)
{
    for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(p)) return area;
    return nullptr;
}

}  // namespace

class TestScreenFit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theWindowFillsASmallScreen()
    {
        // A 1280×720 screen: the window takes all of it and opens maximised (it was 90 %: 1152×648,
        // the Evaluate row cut off); a large screen: the preferred 1600×1000, not maximised.
        QCOMPARE(ui::initialWindowSize(QRect(0, 0, 1280, 720)), QSize(1280, 720));
        QVERIFY(ui::opensMaximized(QRect(0, 0, 1280, 720)));
        QVERIFY(ui::opensMaximized(QRect(0, 0, 1366, 738)));
        QCOMPARE(ui::initialWindowSize(QRect(0, 0, 2560, 1400)), QSize(1600, 1000));
        QVERIFY(!ui::opensMaximized(QRect(0, 0, 2560, 1400)));
    }

    void aDialogFitsTheScreen()
    {
        // Deploy asked for 1000×820 on any screen; now it is capped to the available geometry,
        // also when its contents grow later (its maximum size).
        QDialog d;
        ui::fitDialogToScreen(&d, QSize(4000, 3000));
        const QSize room = d.screen()->availableGeometry().size();
        QVERIFY2(d.width() <= room.width() && d.height() <= room.height(),
                 qPrintable(QStringLiteral("%1x%2 on %3x%4").arg(d.width()).arg(d.height()).arg(room.width()).arg(room.height())));
        QVERIFY(d.maximumHeight() <= room.height() && d.maximumWidth() <= room.width());
    }

    // The wheel over an unfocused combo box scrolls the panel and leaves the box alone (it changed
    // Data from test to holdout); a focused box still takes the wheel.
    void theWheelChangesOnlyAFocusedControl()
    {
        ui::MainWindow w;
        w.resize(1280, 720);
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        w.tabs()->setCurrentWidget(w.designSpacePanel());
        auto* options = w.designSpacePanel()->findChild<ui::EvaluationOptions*>();
        QVERIFY(options);
        QComboBox* data = nullptr;
        for (QComboBox* c : options->findChildren<QComboBox*>())
            if (c->findText(QStringLiteral("fashion-mnist:holdout")) >= 0) data = c;
        QVERIFY(data);
        QCOMPARE(data->focusPolicy(), Qt::StrongFocus);   // not Qt::WheelFocus: the wheel does not take the focus
        QScrollArea* area = scrollAreaOf(data);
        QVERIFY(area);
        area->setFixedHeight(120);   // room to scroll either way
        QApplication::processEvents();
        QScrollBar* bar = area->verticalScrollBar();
        QVERIFY2(bar->maximum() > 0, "the evaluator's scroll area does not scroll");
        area->ensureWidgetVisible(data);
        QApplication::processEvents();
        const int index = data->currentIndex();
        const int scrolled = bar->value();
        w.tabs()->setFocus();
        QVERIFY(!data->hasFocus());
        // The box leaves the event unaccepted and its index alone, so QApplication offers a real wheel
        // event to the parents (the scroll area). (That the area then scrolls is not checked here: a
        // synthesized spontaneous event did not propagate in the offscreen test, not even from the
        // scroll area's viewport, so the test could not tell.)
        QWheelEvent direct(QPointF(5, 5), QPointF(5, 5), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(data, &direct);
        QVERIFY(!direct.isAccepted());
        QCOMPARE(data->currentIndex(), index);
        Q_UNUSED(scrolled);
        // Focused (click or Tab): the wheel is the box's.
        area->ensureWidgetVisible(data);
        data->setFocus();
        QVERIFY(data->hasFocus());
        const int before = data->currentIndex();
        QWheelEvent focused(QPointF(5, 5), QPointF(5, 5), QPoint(), QPoint(0, before == 0 ? -120 : 120), Qt::NoButton, Qt::NoModifier,
                            Qt::NoScrollPhase, false);
        QApplication::sendEvent(data, &focused);
        QVERIFY(data->currentIndex() != before);
    }

    // tinyscope-screenshots --fit: 26 shots (compare mode included); none with any problem: the window larger than the
    // screen, a primary control (Evaluate, Run, a dialog's Close) out of view, a control outside its
    // window or cut at the side of its scroll area, a dialog's verdict line clipped, a label, button,
    // spin box or combo box narrower than its text, or chart text cut to "..." (the per-class names,
    // the convergence legend and ticks, the Pareto y title, the compared schemes' categories, all in
    // presentation mode). The tool's exit code is 0 only when it printed no problem.
    void theFitSetHasNothingCutOff()
    {
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral(TINYSCOPE_SCREENSHOTS), {dir.path(), QStringLiteral("--fit")});
        QVERIFY(p.waitForFinished(-1));   // bounded by the suite's CTest TIMEOUT
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit, qPrintable(out + QString::fromUtf8(p.readAllStandardError())));
        QVERIFY2(out.contains(QStringLiteral("wrote 26 fit screenshots")), qPrintable(out));
        QStringList failures;
        for (const QString& line : out.split(QLatin1Char('\n')))
            if (line.startsWith(QStringLiteral("fit: "))) failures << line;
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
        QVERIFY2(out.contains(QStringLiteral("; 0 problems")), qPrintable(out));
        QVERIFY2(p.exitCode() == 0, qPrintable(out));
        for (const QString& shot : {QStringLiteral("design-space"), QStringLiteral("search"), QStringLiteral("training-inspector-finetune"),
                                    QStringLiteral("export-dialog-verdict-presentation"), QStringLiteral("deploy-dialog-presentation")}) {
            const QImage img(dir.path() + QStringLiteral("/fit-") + shot + QStringLiteral(".png"));
            if (shot.startsWith(QStringLiteral("deploy")) && img.isNull()) continue;   // no supernet or data: no Deploy dialog
            QVERIFY2(!img.isNull(), qPrintable(shot));
            QVERIFY2(img.width() <= 1280 && img.height() <= 720, qPrintable(shot));
        }
    }
};

QTEST_MAIN(TestScreenFit)
#include "test_screen_fit.moc"
