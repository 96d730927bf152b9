#pragma once
// The Predictor panel: choose an accuracy dataset, train the MLP predictor off the GUI thread
// (recipe options, live per-epoch loss / MAE chart, progress, Cancel), see predicted against
// measured accuracy on the held-out split with the y = x line and the metrics, check it against a
// supernet on fresh subnets (measured on the test set), save and load predictors. The current
// predictor is what the Search panel asks for accuracy.
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/predictor/PredictorCheck.h"
#include "predict/AccuracyDataset.h"

#include <QFutureWatcher>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QChartView;

namespace tinyscope::ui {

class AppState;
class LiveLineChart;

class PredictorPanel : public QWidget {
    Q_OBJECT
public:
    explicit PredictorPanel(AppState* state, QWidget* parent = nullptr);
    ~PredictorPanel() override;

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
    void runJob(Job kind);
    void onEpoch(const EpochRecord& e, int member);
    void finishJob();
    void showCard();
    // A non-empty `freshNote` (MAE after the offset, what was measured): the points are a check on
    // fresh subnets, and the title, legend and metrics say so.
    void showScatter(const std::vector<double>& predicted, const std::vector<double>& measured, const QString& freshNote = {});
    void setBusy(bool busy, const QString& what);

    AppState* state_;
    std::shared_ptr<AccuracyPredictor> predictor_;
    std::shared_ptr<const AccuracyDataset> dataset_;   // last dataset loaded, with its path
    QString datasetLoadedFrom_;
    std::atomic<bool> cancel_{false};
    QFutureWatcher<void> watcher_;
    std::shared_ptr<JobResult> job_;
    QString lastError_;
    PredictorCheck lastCheck_;

    QLineEdit* dataPath_;
    QLabel* dataInfo_;
    QComboBox* recipeBox_;
    QSpinBox* epochs_;
    QDoubleSpinBox* lr_;
    QComboBox* schedule_;
    QSpinBox* batch_;
    QSpinBox* seed_;
    QDoubleSpinBox* validation_;
    QSpinBox* ensemble_;
    QSpinBox* threads_;
    QPushButton* train_;
    QPushButton* evaluate_;
    QPushButton* check_;
    QSpinBox* checkCount_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* card_;
    LiveLineChart* loss_;   // series 0: train L1, 1: validation MAE
    QChartView* scatterView_;
    QLabel* metrics_;
    int scatterPoints_ = 0;
};

}  // namespace tinyscope::ui
