#pragma once
// The guided tour's side panel (Help → Tours): the tour's title, "step k of n", the step's
// explanation, and Back / Next / Restart / Close. Showing a step performs its actions (TourDriver);
// Back replays the tour from its first step to the previous one, so the window is exactly as that
// step left it (searches are re-run: they are deterministic for a seed). Closing or finishing the
// tour brings back the workspace, board and subnet the user had when it started (issue 47).
#include "space/SubnetConfig.h"
#include "tour/Tour.h"
#include "workspace/Workspace.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QProgressBar;

namespace tinyscope::ui {

class AppState;
class TourDriver;

class TourPanel : public QWidget {
    Q_OBJECT
public:
    // Steps are performed by `driver`; `state` is what a closed tour brings back.
    TourPanel(AppState* state, TourDriver* driver, QWidget* parent = nullptr);

    void start(const Tour& tour);   // shows and performs the first step
    bool next();                    // false at the last step or while a step is still running
    bool back();
    void restart();
    // Closes the tour's dialogs and highlights; brings back the workspace, board and subnet of
    // before the tour (start() records them unless a tour is already open).
    void stop();

    bool hasTour() const { return !tour_.steps.empty(); }
    const Tour& tour() const { return tour_; }
    int step() const { return step_; }   // 0-based
    int steps() const { return static_cast<int>(tour_.steps.size()); }
    bool busy() const;
    bool lastStepOk() const { return ok_; }
    QString statusText() const;
    TourDriver* driver() const { return driver_; }

Q_SIGNALS:
    void stepDone(int step, bool ok, const QString& message);   // its actions finished (or failed)
    void closeRequested();

private:
    void show(int step, bool replay);
    void refresh();

    struct Before {
        Workspace workspace;
        QString board;
        SubnetConfig subnet;
    };
    AppState* state_;
    TourDriver* driver_;
    std::optional<Before> before_;   // while a tour is open
    Tour tour_;
    int step_ = 0;
    bool ok_ = true;
    QLabel* title_;
    QLabel* position_;
    QProgressBar* progress_;
    QLabel* stepTitle_;
    QLabel* text_;
    QLabel* status_;
    QPushButton* back_;
    QPushButton* next_;
    QPushButton* restart_;
    QPushButton* close_;
};

}  // namespace tinyscope::ui
