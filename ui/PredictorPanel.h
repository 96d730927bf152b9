#pragma once
// The Predictor panel: choose an accuracy dataset, train the MLP predictor off the GUI thread
// (recipe options, live per-epoch loss / MAE chart, progress, Cancel), see predicted against
// measured accuracy on the held-out split with the y = x line and the metrics, check it against a
// supernet on fresh subnets (measured on the test set), save and load predictors. The current
// predictor is what the Search panel asks for accuracy.
// Assembled from PredictorRecipeForm (dataset + recipe), PredictorCardView (the current predictor),
// LiveLineChart (loss per epoch) and PredictorScatter; the jobs run on a JobRunner and their domain
// work is in PredictorWork.
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/predictor/PredictorCheck.h"
#include "predict/AccuracyDataset.h"

#include "JobControl.h"

#include <QWidget>

#include <cstdint>
#include <functional>
#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace tinyscope::ui {

class AppState;
class TourActions;
class JobRunner;
class LiveLineChart;
class PredictorCardView;
class PredictorRecipeForm;
class PredictorScatter;
struct JobFailure;

class PredictorPanel : public QWidget {
    Q_OBJECT
public:
    explicit PredictorPanel(AppState* state, QWidget* parent = nullptr);
    ~PredictorPanel() override;
    // Guided tours (TourDriver): its parts as highlight targets.
    void addTourActions(TourActions& actions);

    std::shared_ptr<AccuracyPredictor> predictor() const { return predictor_; }
    QString datasetPath() const;
    void setDatasetPath(const QString& path);
    PredictorRecipe recipe() const;
    void setRecipe(const PredictorRecipe& r);

    // Long jobs run on a worker thread; jobFinished() says when and whether they succeeded.
    void startTraining();
    void startEvaluation();   // scatter of the current predictor on the dataset's held-out split
    // The current predictor against measurements: `subnets` fresh draws (seed kCheckSeed, which no
    // shipped dataset used) measured on the shipped supernet on `images` test images each (0: all),
    // BN re-calibrated on 2,000 holdout images: `tinyscope predict --random N --seed 12345 --measure`.
    void startCheck(int subnets, int images);
    static constexpr std::uint64_t kCheckSeed = 12345;
    void cancel();
    bool busy() const;
    bool loadPredictor(const QString& path);   // shows a dialog on error
    bool savePredictor(const QString& path);

    // What is on screen (for tests).
    int epochPoints() const;
    int scatterPoints() const;
    QString metricsText() const;
    QString lastError() const { return lastError_; }
    const PredictorCheck& lastCheck() const { return lastCheck_; }   // of the last finished check

Q_SIGNALS:
    void predictorChanged();
    void jobFinished(bool ok);

private:
    struct JobResult;
    enum class Job { Train, Evaluate, Check };
    QWidget* makeControls();   // the side column: form, actions, progress, status, card
    QWidget* makeCharts();     // loss per epoch above the scatter
    void connectControls();
    void loadShipped();        // the workspace's predictor, and its dataset if at hand
    // The predictor shipped for the workspace's space (nullptr if none or, said on the status line, unreadable).
    std::shared_ptr<AccuracyPredictor> shippedPredictor(const QString& errorPrefix);
    void onSpaceChanged();
    // A job that cannot start: says why (on the status line, or in a dialog titled `dialogTitle`), jobFinished(false).
    bool refuse(const QString& why, const QString& dialogTitle = {});
    void runJob(Job kind);
    void onEpoch(const EpochRecord& e, int member);
    // Runs `work` (which fills `job`) on the job runner; finishJob shows the outcome.
    void startJob(const std::shared_ptr<JobResult>& job, std::function<void(const JobControl&)> work);
    void finishJob(JobResult& job, const JobFailure* failure);
    void showCard();   // the card and the per-epoch record of the run that made the predictor
    void setBusy(bool busy, const QString& what);

    AppState* state_;
    std::shared_ptr<AccuracyPredictor> predictor_;
    std::shared_ptr<const AccuracyDataset> dataset_;   // last dataset loaded, with its path
    QString datasetLoadedFrom_;
    JobRunner* jobs_;
    QString lastError_;
    PredictorCheck lastCheck_;

    PredictorRecipeForm* form_;
    PredictorCardView* card_;
    PredictorScatter* scatter_;
    LiveLineChart* loss_;   // series 0: train L1, 1: validation MAE
    QPushButton* train_;
    QPushButton* evaluate_;
    QPushButton* check_;
    QSpinBox* checkCount_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
};

}  // namespace tinyscope::ui
