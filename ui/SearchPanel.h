#pragma once
// The Search panel, assembled from components: the limits (SearchLimitsForm), the algorithm
// (SearchOptionsForm), Run / Cancel with progress, the convergence chart (ConvergenceChart), the
// Pareto chart (ParetoChart) with search playback under them (SearchPlayback: a generation slider
// and play button over the shown run), the winner card (WinnerCard) and the run history (RunHistoryView).
// A click on a Pareto point loads that subnet into the Design-space panel (AppState).
// It holds the typed SearchResult it shows, runs the search (LiveSearch: re-runs while a limit moves,
// docs/SEARCH.md) and the winner's measurement on JobRunners.
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/accuracy/WinnerMeasurement.h"
#include "search/ArchitectureSearch.h"
#include "space/DesignSpace.h"

#include <QWidget>

#include <map>
#include <memory>
#include <string>

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace tinyscope::ui {

class AppState;
class TourActions;
class DeployDialog;
class JobRunner;
class ConvergenceChart;
class LiveSearch;
class ParetoChart;
class RunHistoryView;
class SearchPlayback;
class SearchLimitsForm;
class SearchOptionsForm;
class WinnerCard;

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    // `historyPath`: where runs are kept ("" = userStateDir()/search-history.json).
    explicit SearchPanel(AppState* state, const QString& historyPath = QString(), QWidget* parent = nullptr);
    ~SearchPanel() override;
    // Guided tours (TourDriver): "search", "use-winner", "deploy-dialog" and its parts as highlight targets.
    void addTourActions(TourActions& actions);

    void setOracle(std::shared_ptr<AccuracyOracle> oracle);
    Constraints constraints() const;
    SearchOptions options() const;
    void setLimit(const std::string& key, double value, bool enabled);
    void setOptions(const SearchOptions& o);
    // The fine-tuning memory limit: inference peak + extra memory of `pattern` <= `kb` KB.
    void setTrainingLimit(double kb, const QString& pattern, bool enabled);

    // Starts a search on the search runner; `record` adds it to the history when it finishes.
    void startSearch(bool record = true);
    void cancel();
    bool busy() const;
    void reopen(int historyRow);                // shows a stored run (and brings back its space)
    // Selects the winner in the other panels; a winner with a TinyEngine report then hands its
    // scheme on (winnerSchemeChosen), after the subnet is set.
    void useWinner();
    // Selects evaluated[index] of the shown run in the other panels (a click on the Pareto chart);
    // false, with the reason in the status line, when the stored run kept no config for it.
    bool loadCandidate(std::size_t index);
    // "Deploy…": the Deploy dialog on the shown winner mapped onto the workspace's supernet (as
    // measureWinner maps it), non-modal; nullptr (and a status line) when there is no winner or supernet.
    DeployDialog* deployWinner();
    // Measures the shown winner on the supernet off the GUI thread (`images` test images, 0: all;
    // BN re-calibrated on 2,000 holdout images), the lab's search_and_measure_acc; a winner of
    // another space is transferred (same blocks). winnerMeasured() says when; the winner card then
    // shows the measurement as long as the same subnet is shown. Calling it again cancels.
    void measureWinner(int images = 0);
    bool measuring() const;
    // The last finished measurement (measured == 0 and empty measured_by before the first).
    const WinnerMeasurement& winnerMeasurement() const { return measurement_; }
    bool exportHistory(const QString& path);   // .csv -> CSV, otherwise JSON
    void setHistoryPath(const QString& path);   // switches to another history file (screenshots, tests)

    // What is on screen (for tests): the result shown, live or re-opened from the history (then
    // rebuilt from the record: see StoredSearch.h); nullptr before the first.
    const SearchResult* lastResult() const { return shown_.get(); }
    const std::string& winnerDiagramDot() const;   // empty: no winner shown
    int historyRows() const;
    int convergencePoints() const;
    int paretoPoints() const;
    QString statusText() const;
    SearchPlayback* playback() const { return playback_; }
    ParetoChart* paretoChart() const { return pareto_; }
    ConvergenceChart* convergenceChart() const { return convergence_; }
    double lastSeconds() const;

Q_SIGNALS:
    void searchFinished(bool ok);
    void winnerMeasured(bool ok);
    void subnetUsed();
    // "Use this subnet" on a winner TinyEngine can train: its scheme pattern ("bias-only:9+pw1:2@1/4"),
    // emitted after AppState::setSubnet (the Training inspector's applySchemePattern takes it).
    void winnerSchemeChosen(const QString& pattern);

protected:
    // The first time the panel is shown it runs the default search (a preview, not recorded), so
    // the charts are never empty and live re-runs work from the first slider move.
    void showEvent(QShowEvent* e) override;

private:
    QWidget* buildControls();   // limits, options, where accuracy comes from (scrolls)
    QWidget* buildRunRow();     // Live, Run / Cancel, progress, status (pinned below)
    QWidget* buildResults();
    void connectRunners();
    void onLimitEdited(bool fromDrag);
    void showGenerations(const std::vector<GenerationStats>& gens);
    void finishSearch(const SearchResult& r, const DesignSpace& space, bool record);
    void show(std::shared_ptr<const SearchResult> r, const DesignSpace& space);
    void refreshMeasurement();
    void onSpaceChanged();   // keeps the shown run with its space; brings back the new space's
    void setBusy(bool on);
    void setError(const QString& message, const QString& prefix = QString());

    AppState* state_;
    std::shared_ptr<AccuracyOracle> oracle_;
    LiveSearch* search_;
    JobRunner* measureRunner_;
    std::shared_ptr<const SearchResult> shown_;
    DesignSpace shownSpace_;                 // the space of the shown result's configs
    WinnerMeasurement measurement_;          // of `measurement_.searched`, shown while that subnet is the winner
    QString measureProgress_;                // "measuring: …" while a measurement runs
    bool liveRecord_ = false;                // a limit edit since the live timer started was not a drag
    bool shownOnce_ = false;
    // The last run of each other space (by its JSON), with its measurement (issue 47).
    struct KeptRun {
        std::shared_ptr<const SearchResult> result;
        DesignSpace space;
        WinnerMeasurement measurement;
    };
    std::map<std::string, KeptRun> keptRuns_;

    SearchLimitsForm* limits_;
    SearchOptionsForm* options_;
    QCheckBox* live_;
    QPushButton* run_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* oracleLabel_;
    ConvergenceChart* convergence_;
    ParetoChart* pareto_;
    SearchPlayback* playback_;
    WinnerCard* winner_;
    RunHistoryView* history_;
    QTimer* liveTimer_;
};

}  // namespace tinyscope::ui
