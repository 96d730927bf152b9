#include "LiveSearch.h"

#include "JobRunner.h"

#include <algorithm>
#include <mutex>

namespace tinyscope::ui {

// The generations a running search reported: the worker appends, the GUI thread drains on the
// runner's progress signal (JobControl carries counts, not statistics).
struct LiveSearch::Feed {
    std::mutex mutex;
    std::vector<GenerationStats> pending;
};

LiveSearch::LiveSearch(QObject* owner) : QObject(owner), runner_(new JobRunner(this)), feed_(std::make_shared<Feed>())
{
    connect(runner_, &JobRunner::progress, this, &LiveSearch::drain);
    connect(runner_, &JobRunner::failed, this, [this](const QString& message) {
        if (!takeRerun()) Q_EMIT failed(message);
    });
    connect(runner_, &JobRunner::cancelled, this, [this] {
        if (!takeRerun()) Q_EMIT failed(QStringLiteral("Search cancelled."));
    });
}

bool LiveSearch::busy() const { return runner_->busy(); }

bool LiveSearch::queue(bool record)
{
    if (!busy()) return false;
    if (lastSeconds_ < kLiveSeconds) runner_->cancel();
    rerunPending_ = true;
    rerunRecord_ = rerunRecord_ || record;
    return true;
}

void LiveSearch::cancel()
{
    rerunPending_ = false;
    runner_->cancel();
}

bool LiveSearch::takeRerun()
{
    const bool record = rerunRecord_;
    rerunRecord_ = false;
    if (!rerunPending_) return false;
    rerunPending_ = false;
    Q_EMIT rerunDue(record);
    return true;
}

void LiveSearch::start(const DesignSpace& space, const Constraints& constraints, const SearchOptions& options,
                       std::shared_ptr<AccuracyOracle> oracle, bool record)
{
    auto feed = feed_ = std::make_shared<Feed>();
    runner_->run(
        [space, constraints, options, oracle, feed](const JobControl& job) {
            SearchCallbacks cb;
            cb.cancel = job.cancel;
            const int every = std::max(1, options.generations / 200);   // at most ~200 chart updates
            cb.onGeneration = [&job, feed, every, options](const GenerationStats& g, const SearchCandidate&) {
                if (g.generation % every != 0) return;
                {
                    std::lock_guard<std::mutex> lock(feed->mutex);
                    feed->pending.push_back(g);
                }
                job.report(static_cast<std::size_t>(g.generation) + 1, static_cast<std::size_t>(options.generations) + 1, "");
            };
            return runSearch(space, *oracle, constraints, options, cb);
        },
        [this, space, record](SearchResult r) {
            if (takeRerun()) return;
            lastSeconds_ = r.seconds;
            Q_EMIT finished(r, space, record);
        });
}

void LiveSearch::drain()
{
    std::vector<GenerationStats> g;
    {
        std::lock_guard<std::mutex> lock(feed_->mutex);
        g.swap(feed_->pending);
    }
    if (!g.empty()) Q_EMIT generations(g);
}

}  // namespace tinyscope::ui
