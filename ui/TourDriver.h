#pragma once
// Performs a guided tour's actions (core/tour/Tour.h) on the workbench window: panels, workspaces,
// subnets, searches, sparse-update schemes, dialogs, and a highlight frame around a named part of
// the window. Actions run in order on the GUI thread; a search runs on the Search panel's own
// worker and the driver continues when it finishes, so the window stays responsive throughout.
// What each action does, and which widget a highlight names, is the window's table (TourActions,
// filled by MainWindow and the panels); the driver itself does the queue, highlights and dialogs.
#include "TourActions.h"
#include "tour/Tour.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

#include <vector>

class QWidget;

namespace tinyscope::ui {

class TourDriver : public QObject, private TourRun {
    Q_OBJECT
public:
    explicit TourDriver(QObject* parent = nullptr);
    ~TourDriver() override;

    // Performs the actions of `steps` in order (Back replays a tour from its start: see TourPanel);
    // highlights only for the last step. finished(ok, message) follows, also when nothing was to do.
    void perform(const std::vector<TourStep>& steps);
    bool busy() const { return busy_; }
    void stop();                   // drops the remaining actions (a running search is cancelled)
    void closeDialogs();           // the dialogs earlier steps opened
    void clearHighlights();

    // The names "highlight" accepts (docs/TOURS.md: the core's list, tourHighlightTargets) and the
    // widget each names now (nullptr: none, or no part of the window registered it).
    static QStringList targetNames();
    QWidget* target(const QString& name) const;
    int highlightCount() const;    // frames shown now (tests)
    int openDialogs() const;
    // What each action does: filled by MainWindow and the panels before the first tour.
    TourActions& actions() { return actions_; }

Q_SIGNALS:
    void finished(bool ok, const QString& message);
    void progress(const QString& what);   // "running the search …"

private:
    void runNext();
    // Performs one action; returns false when it continues asynchronously (runNext is called later).
    bool perform(const TourAction& a, bool highlight);
    void fail(const TourAction& a, const QString& reason);
    void reveal(QWidget* w);       // switches the tabs that hide w
    void highlight(QWidget* w);
    // TourRun, for the action being performed.
    void keepDialog(QWidget* dialog) override;
    void status(const QString& what) override;
    Later later() override;

    TourActions actions_;
    TourAction current_;                               // the action being performed
    std::vector<std::pair<TourAction, bool>> queue_;   // action, highlight it
    std::size_t next_ = 0;
    bool busy_ = false;
    int generation_ = 0;           // a search that finishes after stop() is ignored
    std::vector<QPointer<QWidget>> frames_;
    std::vector<QPointer<QWidget>> dialogs_;
};

}  // namespace tinyscope::ui
