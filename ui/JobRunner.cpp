#include "JobRunner.h"

#include "EventWait.h"

#include <QCoreApplication>
#include <QFutureWatcher>
#include <QPointer>
#include <QSet>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace tinyscope::ui {

namespace {
// Runners live on the GUI thread; so does this registry.
QSet<JobRunner*>& registry()
{
    static QSet<JobRunner*> runners;
    return runners;
}

struct JobOutcome {
    enum class Kind { Ok, Cancelled, Failed } kind = Kind::Ok;
    QString message;
};
}  // namespace

JobRunner::JobRunner(QObject* owner) : QObject(owner) { registry().insert(this); }

JobRunner::~JobRunner()
{
    // The work holds copies and shared state only, and its progress goes through qApp to a
    // QPointer checked on the GUI thread: nothing to wait for. A closing panel does not wait for
    // an uninterruptible Graphviz layout; a cancellable job stops at its next check.
    registry().remove(this);
    if (cancel_) *cancel_ = true;
}

bool JobRunner::start(std::function<void(const JobControl&)> work, std::function<void()> deliver,
                      std::function<void(const JobFailure&)> onFailure)
{
    if (busy_) return false;
    busy_ = true;
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    auto flag = cancel_;
    auto outcome = std::make_shared<JobOutcome>();
    QPointer<JobRunner> self(this);
    JobControl job;
    job.cancel = flag.get();
    job.progress = [self](std::size_t done, std::size_t total, const std::string& stage) {
        // Posted to the application object (alive for the whole run); `self` is read on the GUI thread only.
        QMetaObject::invokeMethod(
            qApp,
            [self, done, total, stage = QString::fromStdString(stage)] {
                if (self && self->busy_) Q_EMIT self->progress(static_cast<qint64>(done), static_cast<qint64>(total), stage);
            },
            Qt::QueuedConnection);
    };
    if (watcher_) watcher_->deleteLater();   // may be the one whose finished() is calling us
    watcher_ = new QFutureWatcher<void>(this);
    connect(watcher_, &QFutureWatcher<void>::finished, this, [this, outcome, deliver, onFailure] {
        busy_ = false;
        switch (outcome->kind) {
        case JobOutcome::Kind::Ok:
            deliver();
            break;
        case JobOutcome::Kind::Cancelled:
            if (onFailure) onFailure({true, QString()});
            Q_EMIT cancelled();
            break;
        case JobOutcome::Kind::Failed:
            if (onFailure) onFailure({false, outcome->message});
            Q_EMIT failed(outcome->message);
            break;
        }
        Q_EMIT finished(outcome->kind == JobOutcome::Kind::Ok);
    });
    Q_EMIT started();
    // `flag` travels with the work so the JobControl's pointer stays valid until it returns.
    watcher_->setFuture(QtConcurrent::run([work = std::move(work), job, flag, outcome] {
        try {
            work(job);
        } catch (const CancelledError&) {
            outcome->kind = JobOutcome::Kind::Cancelled;
        } catch (const std::exception& e) {
            outcome->kind = JobOutcome::Kind::Failed;
            outcome->message = QString::fromUtf8(e.what());
        } catch (...) {
            outcome->kind = JobOutcome::Kind::Failed;
            outcome->message = QStringLiteral("the job failed with an unknown error");
        }
    }));
    return true;
}

void JobRunner::cancel()
{
    if (busy_ && cancel_) *cancel_ = true;
}

bool JobRunner::cancelRequested() const { return busy_ && cancel_ && cancel_->load(); }

bool JobRunner::waitForIdle(int timeoutMs)
{
    return processEventsUntil([this] { return !busy_; }, timeoutMs);
}

int JobRunner::running()
{
    int n = 0;
    for (const JobRunner* r : registry()) n += r->busy_;
    return n;
}

void JobRunner::cancelAll()
{
    for (JobRunner* r : registry()) r->cancel();
}

}  // namespace tinyscope::ui
