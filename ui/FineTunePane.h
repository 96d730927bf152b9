#pragma once
// The Training inspector's Fine-tune tab (issue 20; docs/FINETUNING.md, "Fine-tune tab"): fine-tunes
// the inspector's current model with its current scheme on a task (fineTune, off the GUI thread
// through a JobRunner: progress, Cancel), the accuracy per epoch filling FineTuneCurve live, and
// each finished run added to SchemeAccuracyScatter. The request is the TinyEngine export's
// (InspectorFiles::exportRequest: the zoo model with the int8 weights the user chose, or the
// design-space subnet of the workspace's supernet, and the scheme as tiny-training's file) with
// the form's recipe at the model's input size. Each run has its checkpoint folder
// <state>/finetune/<model>-<qas|noqas>-<hash of model, scheme, data and recipe>, so a cancelled run
// resumes when it is run again. "Find the best scheme under the budget" runs the contribution
// analysis (short runs, resumable, under <state>/finetune/contributions/), then the knapsack under
// the budget the toolbar gives minus the inference peak, and applies the scheme as one undoable step.
#include "nn/finetune/ContributionAnalysis.h"
#include "nn/finetune/FineTuneJob.h"

#include <QWidget>

#include <functional>
#include <optional>

class QLabel;
class QPushButton;
class QSplitter;

namespace tinyscope::ui {

class AppState;
class FineTuneCurve;
class FineTuneForm;
class InspectorFiles;
class JobProgressBar;
class JobRunner;
class SchemeAccuracyScatter;
class TrainingLayerModel;

class FineTunePane : public QWidget {
    Q_OBJECT
public:
    using ModelKey = std::function<QString()>;   // the inspector's picker: a zoo name or inspectorSubnetKey()
    FineTunePane(AppState* state, TrainingLayerModel* layers, InspectorFiles* files, ModelKey modelKey, QWidget* parent = nullptr);
    ~FineTunePane() override;

    FineTuneForm* form() const { return form_; }
    FineTuneCurve* curve() const { return curve_; }
    SchemeAccuracyScatter* scatter() const { return scatter_; }
    JobRunner* runner() const { return runner_; }

    // The request for the current model and scheme; throws InputError (no model, a scheme
    // tiny-training's keys cannot express, an opened graph that is no zoo model).
    FineTuneRequest request() const;
    QString runFolder(const FineTuneRequest& rq) const;

    // The contribution analysis, then the scheme with the largest summed gain whose extra memory
    // fits budget − inference peak, applied as one undoable step. False (and why in the status
    // line) when refused: busy, no model, a budget below the least any scheme needs.
    bool findBestScheme();
    // Which tails, weight window and ratios the analysis measures (its base and out are filled
    // per run; empty tails = every 4th). Tests make it small.
    void setAnalysisOptions(const ContributionOptions& o) { analysis_ = o; }
    const ContributionResult* lastAnalysis() const { return lastAnalysis_ ? &*lastAnalysis_ : nullptr; }

    bool start();          // false (and the reason in the status line) when refused or busy
    void cancel();
    bool busy() const;
    bool waitForIdle(int timeoutMs);
    void setBudgetKB(double kb);

    // What the form has no control for (batch, seed, augmentation, threads); the form's fields and
    // the model's resolution override it. Tests and screenshots make runs small with it.
    void setBaseRecipe(const FineTuneRecipe& r) { base_ = r; }
    void setQuantizeOptions(const QuantizeOptions& q) { quantize_ = q; }
    void setRunsRoot(const QString& dir) { root_ = dir; }   // default <userStateDir()>/finetune

    QString statusText() const;
    QString warningText() const;

Q_SIGNALS:
    void runFinished(bool ok);

protected:
    void changeEvent(QEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    struct Run;
    void targetChanged();
    void fitChartsHeight();
    QString modelIdentity() const;
    QString modelName() const;
    QString folderModel() const;   // "subnet" or the zoo name: the run folders' prefix
    QString targetKey() const;   // model identity + scheme: what the curve shows must match
    FineTuneRequest baseRequest() const;   // model, data, quantization and recipe; the export's scheme file
    std::int64_t extraBudgetBytes() const;   // budget − inference peak
    void applyBest(const ContributionResult& c, std::int64_t budgetBytes, const Run& run);
    void showResult(const FineTuneResult& r, const Run& run);
    void showFailure(const QString& message, bool cancelled, const Run& run);
    void setStatus(const QString& text, bool error = false);
    void setBusy(bool busy);
    // The prepared (quantized) model of the last run, reused while the model and quantization stay.
    void usePrepared(FineTuneRequest& rq) const;
    void keepPrepared(const FineTuneRequest& rq, std::shared_ptr<const PreparedModel> prepared);
    // Runs f(this) on the GUI thread later, unless the pane is gone by then (callable from jobs).
    using Post = std::function<void(std::function<void(FineTunePane*)>)>;
    Post poster();
    // In a job: prepares rq's model unless usePrepared gave one, and posts it to keepPrepared.
    static void prepareInJob(FineTuneRequest& rq, const JobControl& job, const Post& post);

    AppState* state_;
    TrainingLayerModel* layers_;
    InspectorFiles* files_;
    ModelKey modelKey_;
    FineTuneForm* form_;
    QPushButton* run_;
    QPushButton* cancel_;
    QPushButton* find_;
    JobRunner* runner_;
    JobProgressBar* progress_;
    QLabel* status_;
    QLabel* warning_;
    FineTuneCurve* curve_;
    SchemeAccuracyScatter* scatter_;
    QSplitter* charts_;
    FineTuneRecipe base_;
    ContributionOptions analysis_;
    std::optional<ContributionResult> lastAnalysis_;
    double budgetKB_ = 0;
    QuantizeOptions quantize_;
    QString root_;
    std::shared_ptr<const PreparedModel> prepared_;
    std::string preparedKey_;
    QString curveKey_;      // targetKey() of the run the curve shows
    QString curveFolder_;   // its checkpoint folder
    int generation_ = 0;    // epochs posted by an earlier job are dropped
};

}  // namespace tinyscope::ui
