#pragma once
// The Search panel: limits as sliders + spin boxes (MACs, peak SRAM, params, flash), algorithm
// and its parameters, Run / Cancel with progress; a live convergence chart, a Pareto scatter
// (accuracy vs a cost, colour = SRAM or MACs) with the limit line and the winner marked, the
// winner's block diagram and costs, and a history of runs kept between sessions that can be
// re-opened and exported. When a search takes under ~100 ms, moving a limit re-runs it live.
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/measure/WinnerMeasurement.h"
#include "search/ArchitectureSearch.h"
#include "search/SearchHistory.h"

#include <QFutureWatcher>
#include <QWidget>

#include <atomic>
#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QTableWidget;
class QTimer;
class QVBoxLayout;
class QChartView;

namespace tinyscope {
class TrainingMemoryLimit;
}

namespace tinyscope::ui {

class DeployDialog;

class AppState;
class LiveLineChart;
class SvgGraphView;

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    // `historyPath`: where runs are kept ("" = userStateDir()/search-history.json).
    explicit SearchPanel(AppState* state, const QString& historyPath = QString(), QWidget* parent = nullptr);
    ~SearchPanel() override;

    void setOracle(std::shared_ptr<AccuracyOracle> oracle);
    Constraints constraints() const;
    SearchOptions options() const;
    void setLimit(const std::string& key, double value, bool enabled);
    void setOptions(const SearchOptions& o);
    // The fine-tuning memory limit: inference peak + extra memory of `pattern` <= `kb` KB.
    void setTrainingLimit(double kb, const QString& pattern, bool enabled);

    // Starts a search on a worker thread; `record` adds it to the history when it finishes.
    void startSearch(bool record = true);
    void cancel();
    bool busy() const;
    void reopen(int historyRow);                // shows a stored run
    void useWinner();                           // selects the winner in the other panels
    // "Deploy…": the Deploy dialog on the shown winner mapped onto the shipped supernet (as
    // measureWinner maps it), non-modal; nullptr (and a status line) when there is no winner or supernet.
    DeployDialog* deployWinner();
    // Measures the shown winner on the shipped supernet off the GUI thread (`images` test images,
    // 0: all; BN re-calibrated on 2,000 holdout images), the lab's search_and_measure_acc; a winner
    // of another space is transferred (same blocks). winnerMeasured() says when; the winner's text
    // then shows the measurement as long as the same subnet is shown. Calling it again cancels.
    void measureWinner(int images = 0);
    bool measuring() const { return measureWatcher_.isRunning(); }
    // The last finished measurement (measured == 0 and empty measured_by before the first).
    const WinnerMeasurement& winnerMeasurement() const { return measurement_; }
    bool exportHistory(const QString& path);   // .csv -> CSV, otherwise JSON
    void setHistoryPath(const QString& path);   // switches to another history file (screenshots, tests)

    // What is on screen (for tests).
    const SearchResult* lastResult() const { return result_.get(); }
    const std::string& winnerDiagramDot() const { return winnerDot_; }   // empty: no winner shown
    int historyRows() const;
    int convergencePoints() const;
    int paretoPoints() const { return paretoPoints_; }
    QString statusText() const;
    double lastSeconds() const { return lastSeconds_; }

Q_SIGNALS:
    void searchFinished(bool ok);
    void winnerMeasured(bool ok);
    void subnetUsed();

protected:
    // The first time the panel is shown it runs the default search (a preview, not recorded), so
    // the charts are never empty and live re-runs work from the first slider move.
    void showEvent(QShowEvent* e) override;

private:
    struct LimitRow;
    struct Job;
    void buildLimits(QVBoxLayout* into);
    void buildTrainingLimit(QVBoxLayout* into);
    void checkTrainingPattern();
    void syncRanges();
    void applyWorkspaceLimits();   // the workspace's starting limits (Workspace::search_limits)
    void onLimitEdited(bool fromDrag);
    void onGeneration(const GenerationStats& g, const SearchCandidate& best);
    void finishSearch();
    void showResult(const Json& result, const std::vector<SearchCandidate>* evaluated);
    void showConvergence(const Json& history);
    void showPareto(const Json& sample, const Json& pareto, const Json& best, const Json& constraints);
    void showWinner(const Json& best);
    void refreshWinnerText();   // winnerBase_ + the measurement (or its progress) of that winner
    void refreshHistoryTable();
    void setBusy(bool on);

    AppState* state_;
    std::shared_ptr<AccuracyOracle> oracle_;
    std::vector<std::unique_ptr<LimitRow>> limits_;
    QGroupBox* trainBox_;          // checkable: the limit is on
    QDoubleSpinBox* trainBudget_;
    QLineEdit* trainPattern_;
    QLabel* trainNote_;            // the pattern's parse error, or what it updates
    // Parsed once per (space, pattern): keeps the per-network memo across live re-runs.
    mutable std::shared_ptr<TrainingMemoryLimit> trainLimit_;
    mutable std::string trainLimitKey_;
    std::unique_ptr<SearchHistory> history_;
    std::shared_ptr<Job> job_;
    std::unique_ptr<SearchResult> result_;
    Json shownBest_;
    std::string winnerDot_;   // DOT of the winner's diagram shown (empty: none)
    WinnerMeasurement measurement_;   // of `measurement_.searched`, shown while that subnet is the winner
    QFutureWatcher<void> measureWatcher_;
    std::atomic<bool> measureCancel_{false};
    QString measureProgress_;         // "measuring: …" while a measurement runs
    QString winnerBase_;              // the winner's text without the measurement line
    std::atomic<bool> cancel_{false};
    QFutureWatcher<void> watcher_;
    bool rerunPending_ = false, rerunRecord_ = false;
    double lastSeconds_ = 1e9;
    int paretoPoints_ = 0;

    QComboBox* algorithm_;
    QSpinBox* population_;
    QSpinBox* generations_;
    QDoubleSpinBox* parentRatio_;
    QDoubleSpinBox* mutationRatio_;
    QDoubleSpinBox* archProb_;
    QDoubleSpinBox* resProb_;
    QSpinBox* seed_;
    QCheckBox* live_;
    QPushButton* run_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* oracleLabel_;
    LiveLineChart* convergence_;   // series 0: best so far, 1: population mean
    QComboBox* paretoAxis_;
    QChartView* pareto_;
    SvgGraphView* diagram_;
    QLabel* winner_;
    QPushButton* use_;
    QPushButton* measure_;
    QPushButton* deploy_;
    QTableWidget* table_;
    QTimer* liveTimer_;
    Json shownSample_, shownPareto_, shownConstraints_;
    bool restoring_ = false;
    bool shownOnce_ = false;
};

}  // namespace tinyscope::ui
