// ui/JobRunner (issue 19: one way to run core work off the GUI thread): results, progress, cancel
// and errors arrive on the GUI thread; one job per runner; a destroyed runner delivers nothing;
// quitting (finishGui) cancels every runner's job instead of waiting for it.
#include "TestSupport.h"

#include "GuiMain.h"
#include "JobRunner.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QThreadPool>

#include <atomic>
#include <stdexcept>

using namespace tinyscope;
using namespace tinyscope::ui;

namespace {
// Work that runs until it is cancelled, reporting each round.
int untilCancelled(const JobControl& job, std::atomic<int>* rounds)
{
    for (int i = 0;; ++i) {
        job.report(static_cast<std::size_t>(i), 0, "spinning");
        ++*rounds;
        job.check();
        QThread::msleep(5);
    }
}
}  // namespace

class TestJobRunner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void deliversTheResultAndProgressOnTheGuiThread()
    {
        QObject owner;
        auto* runner = new JobRunner(&owner);
        QSignalSpy progress(runner, &JobRunner::progress);
        QSignalSpy finished(runner, &JobRunner::finished);
        QThread* workThread = nullptr;
        QThread* resultThread = nullptr;
        int result = 0;
        QVERIFY(runner->run(
            [&workThread](const JobControl& job) {
                workThread = QThread::currentThread();
                for (std::size_t i = 1; i <= 3; ++i) job.report(i, 3, "step");
                return 42;
            },
            [&](int r) {
                resultThread = QThread::currentThread();
                result = r;
            }));
        QVERIFY(runner->busy());
        QVERIFY(!runner->run([](const JobControl&) { return 0; }, [](int) {}));   // one job at a time
        QVERIFY(finished.wait(30000));
        QCOMPARE(result, 42);
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(workThread && workThread != QCoreApplication::instance()->thread());
        QCOMPARE(resultThread, QCoreApplication::instance()->thread());
        QCoreApplication::processEvents();   // progress posted before the end
        QCOMPARE(progress.size(), 3);
        QCOMPARE(progress.last().at(0).toLongLong(), 3);
        QCOMPARE(progress.last().at(2).toString(), QStringLiteral("step"));
        QVERIFY(!runner->busy());
    }

    void cancelAndErrorsEndTheJobWithoutAResult()
    {
        QObject owner;
        auto* runner = new JobRunner(&owner);
        std::atomic<int> rounds{0};
        bool delivered = false;
        JobFailure failure;
        QSignalSpy cancelled(runner, &JobRunner::cancelled);
        QVERIFY(runner->run([&rounds](const JobControl& job) { return untilCancelled(job, &rounds); }, [&](int) { delivered = true; },
                            [&](const JobFailure& f) { failure = f; }));
        QTRY_VERIFY_WITH_TIMEOUT(rounds.load() > 0, 30000);
        runner->cancel();
        QVERIFY(runner->cancelRequested());
        QVERIFY(cancelled.wait(30000));
        QVERIFY(!delivered);
        QVERIFY(failure.cancelled);
        // An exception's text is the message; the next job has a fresh cancel flag.
        QSignalSpy failed(runner, &JobRunner::failed);
        QVERIFY(runner->run([](const JobControl& job) -> int {
            job.check();   // not cancelled: the earlier cancel belonged to the earlier job
            throw std::runtime_error("model.pth: key stem.weight has shape [8] in the file, [16] in the space");
        }, [](int) {}));
        QVERIFY(failed.wait(30000));
        QCOMPARE(failed.first().first().toString(), QStringLiteral("model.pth: key stem.weight has shape [8] in the file, [16] in the space"));
    }

    void aDestroyedRunnerDeliversNothing()
    {
        std::atomic<int> rounds{0};
        bool delivered = false;
        auto* owner = new QObject;
        auto* runner = new JobRunner(owner);
        QVERIFY(runner->run([&rounds](const JobControl& job) { return untilCancelled(job, &rounds); }, [&](int) { delivered = true; }));
        QTRY_VERIFY_WITH_TIMEOUT(rounds.load() > 0, 30000);
        delete owner;   // the panel closes: its job is cancelled, not waited for
        QTRY_VERIFY_WITH_TIMEOUT(QThreadPool::globalInstance()->activeThreadCount() == 0, 30000);
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
    }

    // Quitting cancels running jobs: finishGui returns its exit code (a job still running after
    // the grace would end the process with _Exit(7) and fail this suite).
    void quittingCancelsEveryRunnersJob()
    {
        QObject owner;
        auto* a = new JobRunner(&owner);
        auto* b = new JobRunner(&owner);
        std::atomic<int> ra{0}, rb{0};
        QVERIFY(a->run([&ra](const JobControl& job) { return untilCancelled(job, &ra); }, [](int) {}));
        QVERIFY(b->run([&rb](const JobControl& job) { return untilCancelled(job, &rb); }, [](int) {}));
        QTRY_VERIFY_WITH_TIMEOUT(ra.load() > 0 && rb.load() > 0, 30000);
        QCOMPARE(JobRunner::running(), 2);
        QCOMPARE(finishGui(7, 60000), 7);
        QCoreApplication::processEvents();
        QTRY_COMPARE_WITH_TIMEOUT(JobRunner::running(), 0, 30000);
    }
};

QTEST_MAIN(TestJobRunner)
#include "test_job_runner.moc"
