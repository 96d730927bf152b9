#pragma once
// The Search panel's search job on a JobRunner, with live mode's coalescing (docs/SEARCH.md): a
// request while a search runs queues one re-run (a search under kLiveSeconds is cancelled and
// restarted at once; a slower one finishes first, else it would never finish during a drag), and
// when the running search ends, rerunDue asks the panel to start it with the latest limits. Live
// mode never turns itself off (issue 19). Generations reach the GUI thread as the search reports them.
#include "search/ArchitectureSearch.h"
#include "space/DesignSpace.h"

#include <QObject>

#include <memory>
#include <vector>

namespace tinyscope::ui {

class JobRunner;

class LiveSearch : public QObject {
    Q_OBJECT
public:
    static constexpr double kLiveSeconds = 0.1;

    explicit LiveSearch(QObject* owner);

    bool busy() const;
    // While a search runs: keeps one re-run (`record` or-ed into it) and returns true.
    bool queue(bool record);
    void start(const DesignSpace& space, const Constraints& constraints, const SearchOptions& options,
               std::shared_ptr<AccuracyOracle> oracle, bool record);
    void cancel();   // the running search stops (a cancelled result); no re-run follows
    double lastSeconds() const { return lastSeconds_; }
    void setLastSeconds(double s) { lastSeconds_ = s; }   // a re-opened run's pace

Q_SIGNALS:
    void generations(const std::vector<tinyscope::GenerationStats>& g);   // reported since the last
    void finished(const tinyscope::SearchResult& r, const tinyscope::DesignSpace& space, bool record);
    void failed(const QString& message);
    void rerunDue(bool record);   // a search ended with a re-run queued: start it with the latest limits

private:
    struct Feed;
    bool takeRerun();
    void drain();

    JobRunner* runner_;
    std::shared_ptr<Feed> feed_;
    bool rerunPending_ = false, rerunRecord_ = false;
    double lastSeconds_ = 1e9;
};

}  // namespace tinyscope::ui
