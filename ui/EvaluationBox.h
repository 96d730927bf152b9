#pragma once
// The Design-space panel's evaluator: Evaluate the selected subnet on the workspace's supernet
// off the GUI thread (progress, Cancel, result beside the costs), and classify a dropped image.
// The supernet and data come with the workspace (AppState); choosing another checkpoint changes
// the workspace's supernet, or opens the workspace of the space its card names. In a workspace
// without a supernet (Lab 3's VWW space) evaluation is off and says why: no silent transfer.
#include "nn/measure/EvaluationTypes.h"
#include "space/SubnetConfig.h"

#include <QGroupBox>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QProgressBar;
class QPushButton;
class QListWidget;
class QChartView;

namespace tinyscope {
struct EvaluationRequest;
}

namespace tinyscope::ui {

class AppState;
class DeployDialog;
class EvaluationOptions;
class JobRunner;
class PerClassChart;

class EvaluationBox : public QGroupBox {
    Q_OBJECT
public:
    explicit EvaluationBox(AppState* state, QWidget* parent = nullptr);
    ~EvaluationBox() override;

    void evaluate();                        // starts a job (no-op while one runs)
    void setImageCounts(int images, int calibrationImages);
    bool waitForIdle(int timeoutMs);        // for screenshots and tests
    void classify(const QString& imagePath);   // on a worker thread; emits classified()
    bool busy() const { return running_; }
    // "Deploy…": the Deploy dialog on the selected subnet, mapped into the supernet's space as
    // Evaluate maps it (prepareRequest), opened non-modal; nullptr after a warning (no supernet, a
    // subnet the supernet's space cannot hold).
    DeployDialog* openDeployDialog();
    // A supernet file is chosen and exists, and the data can be opened (no dialog needed).
    bool ready() const;
    QString resultText() const;
    const EvalResult& lastResult() const { return last_; }
    int perClassBars() const;   // classes in the per-class chart (tests)
    // The shown result belongs to another subnet or space than the selected one (issue 19: it stayed
    // on screen unmarked after Random, "Use this subnet" or a space change). Marked in the text and
    // the chart's title; unmarked when the evaluated subnet is selected again.
    bool resultStale() const { return stale_; }
    // A result of exactly the selected subnet, space and supernet is shown (lastResult() is it).
    bool hasCurrentResult() const { return evaluatedSubnet_ && !stale_; }
    // The per-class chart, for the owner to place (the Design-space panel shows it in a tab beside
    // the peak-memory chart); perClassShown() is emitted when it has a new result.
    QChartView* perClassView() const;
    EvaluationOptions* options() const { return options_; }   // supernet, data, counts, "Measured by"

Q_SIGNALS:
    void evaluated(bool ok);
    void classified(bool ok);
    void perClassShown();   // an evaluation's per-class chart is ready (perClassView())
    // The per-class chart has a result of the open workspace (false: none, e.g. after a switch).
    void perClassAvailable(bool available);

private:
    QLayout* actionRows();   // Evaluate / Cancel / Classify image…, then Deploy…
    void showWorkspace();                        // supernet, data and notes of the workspace
    void useSupernet(const QString& checkpoint);   // AppState::useSupernet, a warning on refusal
    void setRunning(bool running);
    // Space, transferred config and supernet of the current selection; false after a warning dialog.
    bool prepareRequest(EvaluationRequest& rq, const QString& title);
    void refreshNotes();
    void refreshStale();           // on a selection change: mark or unmark the shown result
    bool isStale() const;          // the selection differs from the evaluated one
    QString evaluationKey() const; // the space and supernet a result is computed with
    static QString keptSpaceOf(const QString& key);   // the space part of an evaluationKey()
    void showStale(bool stale);
    void showKeptResult();         // the open workspace's own last result, or none
    void showResult(EvalResult r, const EvaluationRequest& rq);

    AppState* state_;
    EvaluationOptions* options_;
    QPushButton* run_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* result_;
    QString resultHtml_;          // the last result's text, without the stale mark
    QString evaluatedSpace_;      // the space and supernet the shown result was computed with
    std::shared_ptr<const SubnetConfig> evaluatedSubnet_;
    bool stale_ = false;
    QLabel* note_;
    QPushButton* switchWorkspace_;
    QListWidget* classes_;
    PerClassChart* perClass_;   // top-1 per class of the last evaluation (hidden until there is one)
    bool running_ = false;       // Evaluate is running (the buttons follow)
    JobRunner* evalJobs_;
    JobRunner* classifyJobs_;
    EvalResult last_;
    // The last result in each space (by its name), shown again when the space is open again.
    struct Kept {
        EvalResult result;
        QString html;
        std::shared_ptr<const SubnetConfig> subnet;
        std::vector<std::string> classNames;
        QString key;   // the evaluationKey() it was computed with
    };
    std::map<QString, Kept> kept_;
};

}  // namespace tinyscope::ui
