// Slow tier (ctest -L slow; tests/README.md): `tinyscope-screenshots DIR` (tests/screenshots) in full, as the
// docs' screenshots are made, including the two that measure subnets on the shipped supernet (the
// Fashion-MNIST predictor checked on 20 fresh subnets and a search winner, 2,000 test images
// each: about a minute of CPU). The default tier runs it with --no-measure (test_gui).
#include "ScreenshotChecks.h"
#include "TestSupport.h"

#include <QTemporaryDir>

class SlowScreenshots : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void screenshotCommandWritesEveryPanelWithTheMeasuredOnes()
    {
        QTemporaryDir dir;
        tinyscope::test::runAndCheckScreenshots(dir.path(), true, true);   // with the teaching set
    }
};

QTEST_MAIN(SlowScreenshots)
#include "slow_screenshots.moc"
