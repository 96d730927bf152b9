// Slow tier (ctest -L slow; tests/README.md): `tinyscope-screenshots DIR` (tests/screenshots) in full, as the
// docs' screenshots are made, including the two that measure subnets on the shipped supernet (the
// Fashion-MNIST predictor checked on 20 fresh subnets and a search winner, 2,000 test images
// each: about a minute of CPU). The default tier runs it with --no-measure (test_gui).
// Also `tinyscope-screenshots DIR --loop`: issue 46's loop in the GUI (search → "Use this subnet" →
// Training inspector → Export verified on the emulated Cortex-M7 → Fine-tune), four shots at 1280×720.
#include "DeviceTestSupport.h"
#include "ScreenshotChecks.h"
#include "TestSupport.h"

#include "data/ImageDataset.h"

#include <QTemporaryDir>

class SlowScreenshots : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void screenshotCommandWritesEveryPanelWithTheMeasuredOnes()
    {
        QTemporaryDir dir;
        tinyscope::test::runAndCheckScreenshots(dir.path(), true, true);   // with the teaching set
    }

    // The loop for a searched subnet (issue 46): the fashion-mnist-te workspace searched under 30 M
    // MACs and TinyEngine on the stm32f746 within 64 KB, its winner's scheme in the Training
    // inspector, exported and verified on the emulated M7 (the tool exits 1 unless the verdict is
    // "matches"), one short fine-tuning epoch. Skips without ../shared's runtimes, a device tool,
    // the shipped mcunet-fmnist-te supernet and predictor, or Fashion-MNIST.
    void loopScreenshotsShowASearchedSubnetVerifiedAndFineTuned()
    {
        using namespace tinyscope;
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        for (const char* f : {"/models/supernets/mcunet-fmnist-te.pth", "/models/predictors/mcunet-fmnist-te.bin"})
            if (!QFileInfo::exists(test::sourceDir() + QLatin1String(f)))
                QSKIP(qPrintable(QStringLiteral("the shipped %1 is missing").arg(QLatin1String(f + 1))));
        if (fashionMnistDir().empty()) QSKIP("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)");
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral(TINYSCOPE_SCREENSHOTS), {dir.path(), QStringLiteral("--loop")});
        QVERIFY(p.waitForFinished(-1));   // bounded by the suite's CTest TIMEOUT
        const QByteArray out = p.readAllStandardOutput();
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, (out + err).constData());
        QVERIFY2(out.contains("wrote 4 of 4 loop screenshots"), out.constData());
        QVERIFY2(out.contains("Device matches the workbench"), out.constData());
        for (const char* n : {"loop-search", "loop-inspector", "loop-export-verified", "loop-finetune"}) {
            const QString path = dir.path() + QLatin1Char('/') + QLatin1String(n) + QStringLiteral(".png");
            QVERIFY2(QFileInfo(path).size() > 0, n);
            const QImage img(path);
            QVERIFY2(!img.isNull(), n);
            // The Export dialog on a 1280×720 screen: at most 1280×680, room for its title bar (issue 47).
            const QSize want = QLatin1String(n) == QLatin1String("loop-export-verified") ? QSize(1280, 680) : QSize(1280, 720);
            QVERIFY2(img.size() == want, qPrintable(QStringLiteral("%1: %2x%3").arg(QLatin1String(n)).arg(img.width()).arg(img.height())));
            QVERIFY2(test::distinctColours(img, 5) > 20, n);
        }
    }
};

QTEST_MAIN(SlowScreenshots)
#include "slow_screenshots.moc"
