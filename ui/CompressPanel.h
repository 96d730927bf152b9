#pragma once
// The Compress panel (issue 50): Labs 1 and 2 on the selected subnet of the workspace's supernet.
// Fine-grained pruning — the sensitivity scan as curves beside each layer's parameters, a
// sparsity per layer with the sparse size as you type, prune and measure (optionally fine-tune),
// the weight histograms before / after; channel pruning with its speed-up bars; n-bit linear and
// k-means weights with accuracy against size and the k-means view of one tensor. Every job runs
// off the GUI thread with progress and Cancel (JobRunner); the core jobs are the CLI's
// (runPruning, runWeightQuantization).
#include "compress/Pruning.h"
#include "space/SubnetConfig.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <string>
#include <vector>

class QCheckBox;
class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace tinyscope {
struct EvaluationRequest;
struct PruneResult;
struct WeightQuantResult;
}  // namespace tinyscope

namespace tinyscope::ui {

class AppState;
class DeployDialog;
struct JobFailure;
class TourActions;
class JobProgressBar;
class JobRunner;

class CompressPanel : public QWidget {
    Q_OBJECT
public:
    explicit CompressPanel(AppState* state, QWidget* parent = nullptr);
    ~CompressPanel() override;

    // The jobs (each returns false when it cannot start: no supernet, a job running).
    bool loadLayers();
    bool scanSensitivity();
    bool pruneAndMeasure();
    bool pruneChannels();
    bool quantize();
    void cancel();
    bool waitForIdle(int timeoutMs);   // screenshots, tests, tours

    void setImageCounts(int images, int calibrationImages);   // test images, BN re-calibration images
    void setTraining(int epochs, int images);   // fine-tuning (both pruning pages) and QAT: epochs, images per epoch
    void setUniformSparsity(double s);        // every row of the table
    void setLayerSparsity(int row, double s);
    int layerCount() const;
    // The sparse size the table's sparsities give (non-zeros × 32 bits, every other parameter dense),
    // and the dense size, in bits.
    std::int64_t sparseBits() const;
    std::int64_t denseBits() const;
    void showPage(int page);   // 0 pruning, 1 channels, 2 quantization
    QString resultText() const;
    // The Deploy dialog on the last pruned (fine-grained) or channel-pruned subnet, saved by its run
    // in savedFolder(channels); null when none was saved yet.
    DeployDialog* deploySaved(bool channels);
    QString savedFolder(bool channels) const;
    // compress-settings, compress-page, compress-run, compress-deploy and the panel's highlight
    // targets (core/tour/Tour.h, docs/TOURS.md).
    void addTourActions(TourActions& actions);

private:
    void build();
    QWidget* pruningPage();
    QWidget* channelsPage();
    QWidget* quantizationPage();
    QPushButton* deployButton(bool channels);   // disabled until a run saved its subnet
    bool request(EvaluationRequest& rq);   // the selected subnet on the workspace's supernet; false: said why
    void subnetChanged();
    void showLayers(const std::vector<std::string>& names, const std::vector<std::int64_t>& params);
    void updateSize();
    void showPruning(const PruneResult& r);
    void showChannels(const PruneResult& r);
    void showQuantization(const WeightQuantResult& r);
    void showCluster(int run);
    bool start(const QString& text);
    // A job's end without a result: "cancelled" or "failed" on the bar, the message in a box titled `title`.
    std::function<void(const JobFailure&)> failureShown(const QString& title);
    void setBusy(bool busy);

    AppState* state_;
    JobRunner* jobs_;
    JobProgressBar* progress_;
    QPushButton* cancel_;
    QLabel* subnet_;
    QSpinBox* images_;
    QSpinBox* calibImages_;
    QTabWidget* pages_;
    // pruning
    QTableWidget* layers_;
    QDoubleSpinBox* uniform_;
    QLabel* size_;
    QSpinBox* finetuneEpochs_;
    QSpinBox* finetuneImages_;
    QChartView* curves_;
    QChartView* params_;
    QChartView* histogram_;
    QLabel* pruneResult_;
    QPushButton* deployPruned_;
    std::vector<std::int64_t> layerParams_;
    std::int64_t totalParams_ = 0;
    SubnetConfig layersOf_;   // the subnet the table lists
    // channels
    QDoubleSpinBox* ratio_;
    QCheckBox* sort_;
    QSpinBox* channelEpochs_;
    QChartView* speedup_;
    QLabel* channelResult_;
    QPushButton* deployNarrow_;
    // quantization
    QLineEdit* bits_;
    QCheckBox* linear_;
    QCheckBox* kmeans_;
    QSpinBox* qatEpochs_;
    QSpinBox* qatImages_;
    QChartView* accuracy_;
    QChartView* cluster_;
    QChartView* quantHistogram_;
    QComboBox* run_;
    QLabel* quantResult_;
    std::shared_ptr<const WeightQuantResult> quantized_;
    QString lastResult_;
};

}  // namespace tinyscope::ui
