#pragma once
// The one way panels run core work off the GUI thread (issue 19; it replaced nine hand-made
// QtConcurrent + QFutureWatcher + atomic-flag sites with three cancel idioms).
//
//   runner_ = new JobRunner(this);
//   connect(runner_, &JobRunner::progress, ...);            // on the GUI thread
//   connect(runner_, &JobRunner::failed, ...);              // message of the exception
//   runner_->run([rq](const JobControl& job) { return runEvaluation(rq, job); },
//                [this](EvalResult r) { show(r); });        // on the GUI thread, on success
//   cancelButton -> runner_->cancel();
//
// The work gets a JobControl whose progress posts to the GUI thread and whose cancel flag belongs
// to that job alone (a job still ending after cancel() cannot see the next job's flag). It must
// not touch the panel: capture copies. Results, errors and progress are delivered on the GUI
// thread, never after the runner (a child of its panel) is gone. A CancelledError ends as
// cancelled(), any other exception as failed(what()). Every runner is registered so that quitting
// cancels all running jobs (cancelAll(), called by finishGui).
#include "JobControl.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

template <class T>
class QFutureWatcher;

namespace tinyscope::ui {

// How a job ended without a result: cancelled (CancelledError), or failed with the exception's text.
struct JobFailure {
    bool cancelled = false;
    QString message;   // empty when cancelled
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    explicit JobRunner(QObject* owner);
    ~JobRunner() override;   // cancels the job without waiting (its work holds no pointer to the panel)

    // Starts `work(const JobControl&)` on the thread pool unless a job is running (then false).
    // `onResult(result)` runs on the GUI thread when it returns; for void work, `onResult()`.
    // `onFailure(JobFailure)`, if given, runs for this job's cancel or error (before the signals).
    template <class Work, class OnResult>
    bool run(Work work, OnResult onResult, std::function<void(const JobFailure&)> onFailure = {})
    {
        using Result = std::invoke_result_t<Work, const JobControl&>;
        if constexpr (std::is_void_v<Result>) {
            return start([work](const JobControl& job) { work(job); }, [onResult] { onResult(); }, std::move(onFailure));
        } else {
            auto slot = std::make_shared<std::optional<Result>>();
            return start([work, slot](const JobControl& job) { slot->emplace(work(job)); },
                         [onResult, slot] { onResult(std::move(**slot)); }, std::move(onFailure));
        }
    }

    bool busy() const { return busy_; }
    void cancel();                        // asks the running job to stop (JobControl::check throws)
    bool cancelRequested() const;         // cancel() was called for the running job
    bool waitForIdle(int timeoutMs);      // runs the event loop until the job ended (tests, screenshots)
    static int running();                 // jobs running in every runner
    static void cancelAll();              // quit: every runner's job is asked to stop

Q_SIGNALS:
    void started();
    // done of total at `stage` ("" when the job reports none); queued to the GUI thread.
    void progress(qint64 done, qint64 total, const QString& stage);
    void cancelled();
    void failed(const QString& message);
    void finished(bool ok);               // after the result, cancelled() or failed()

private:
    bool start(std::function<void(const JobControl&)> work, std::function<void()> deliver,
               std::function<void(const JobFailure&)> onFailure);

    QFutureWatcher<void>* watcher_ = nullptr;
    std::shared_ptr<std::atomic<bool>> cancel_;
    bool busy_ = false;
};

}  // namespace tinyscope::ui
