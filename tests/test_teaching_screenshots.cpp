// The screenshot tool's teaching set (issue 22) in the default tier, apart from test_screenshots so
// each suite stays well inside the watchdog on a loaded machine: each guided tour played to its
// first and its last step and compare mode for two subnets and two schemes, as on a 1280×720 screen.
#include "ScreenshotChecks.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace tinyscope;

class TestTeachingScreenshots : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void teachingSetIsWritten()
    {
        QTemporaryDir dir;
        test::runAndCheckTeachingScreenshots(dir.path());
    }
};

QTEST_MAIN(TestTeachingScreenshots)
#include "test_teaching_screenshots.moc"
