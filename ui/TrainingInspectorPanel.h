#pragma once
// The Training-inspector panel: choose a model (every zoo model, or the subnet selected in the
// Design-space panel), choose what to update on the device per layer (bias on/off, weight ratio
// 0/⅛/¼/½/1; a published scheme, "bias-only last N", "last k layers", reset; undo/redo), and see
// at once what it costs — the memory ledger's totals, a per-layer chart against the SRAM budget,
// the rows TinyEngine cannot compile — and the forward + backward graph the scheme prunes.
// Scheme files are tiny-training configs (JSON/YAML); the graph exports as SVG/PNG/DOT and the
// ledger as CSV. docs/TRAINING_INSPECTOR.md describes it.
#include "graph/MemoryLedger.h"
#include "graph/SparseScheme.h"
#include "graph/TrainingGraph.h"
#include "nn/quantize/QuantizationJob.h"
#include "tinyengine/GraphImport.h"

#include <QWidget>

#include <memory>

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QTableView;
class QTabWidget;

namespace tinyscope::ui {

class AppState;
class TourActions;
class ExportDialog;
class FineTunePane;
class InspectorFiles;
class InspectorToolbar;
class MemoryCards;
class SchemeCompareView;
class SchemeBanner;
class TrainingGraphPane;
class TrainingLayerModel;
class TrainingMemoryChart;

class TrainingInspectorPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainingInspectorPanel(AppState* state, QWidget* parent = nullptr);
    ~TrainingInspectorPanel() override;
    // Guided tours (TourDriver): "model", "scheme", "inspector-tab", "budget", "export-dialog" and its parts as highlight targets.
    void addTourActions(TourActions& actions);

    // The picker: zoo model names, then the Design-space panel's subnet (subnetEntryName()).
    QStringList modelNames() const;
    static QString subnetEntryName();
    bool selectModel(const QString& name);
    QString currentModel() const;

    // Scheme actions (each one undoable step). Names: "49kb" or "mcunet-5fps/49kb".
    bool loadPublishedScheme(const QString& name);
    void applyBiasOnly(int n);
    void applyLastLayers(int k);
    void resetScheme();   // the classifier only
    // A scheme pattern ("classifier", "bias-only:N", "last:K", "bias-only:9+pw1:2@1/4", a published
    // name, as search reports and export take them) on the Design-space panel's subnet, selected
    // first if another model is shown: one undoable step. False, with the reason as a status
    // message, when the pattern does not resolve for the subnet or it cannot be lowered.
    // The search winner's TinyEngine scheme comes here ("Use this subnet", after the subnet is set).
    bool applySchemePattern(const QString& pattern);
    void setAutodiffMode(AutodiffMode mode);
    void setBudgetKB(double kb);
    double budgetKB() const;

    // Files; throw InputError with the file and the reason (the GUI actions show it).
    void loadSchemeFile(const QString& path);
    void saveSchemeFile(const QString& path) const;
    void exportLedgerCsv(const QString& path) const;

    // Any training graph, e.g. one read from TinyEngine JSON: shown in the graph view; with its
    // network and scheme, the layer table, ledger and chart follow it (edits then rebuild the
    // graph from the network).
    void showTrainingGraph(TrainingGraph g, const QString& title, std::shared_ptr<const Network> net = {},
                           const ResolvedScheme* scheme = nullptr);

    // A TinyEngine graph opened from a file (File → Open training graph…): its graph, network and
    // recovered scheme; its params pickle becomes the model's int8 weights for Export.
    void showImportedGraph(const ImportedGraph& imported);
    // The TinyEngine export of the current model and scheme (the dialog is modal, work runs off the
    // GUI thread). exportRequest() throws InputError when the scheme cannot be written.
    ExportRequest exportRequest() const;
    void openExportDialog();
    void setModelWeights(const QString& model, const QString& paramsPickle);

    TrainingLayerModel* layerModel() const { return model_; }
    TrainingMemoryChart* chart() const { return chart_; }
    TrainingGraphPane* graphPane() const { return pane_; }
    FineTunePane* fineTunePane() const { return fineTune_; }
    QTabWidget* rightTabs() const { return tabs_; }   // "Training graph" | "Fine-tune" | "Compare schemes"
    SchemeCompareView* schemeCompare() const { return compare_; }
    QTableView* table() const { return table_; }
    QString totalsText() const;
    QString bannerText() const;
    bool waitForGraph(int timeoutMs);   // screenshots and tests: until the graph is laid out

Q_SIGNALS:
    // After a scheme change has reached the totals, chart and graph (the graph may still be
    // laying out when a weight ratio changed).
    void updated();

private:
    void onSchemeChanged();
    void onSubnetChanged();
    void rebuildForModel();
    void showOpenedGraph();
    void refreshTotals();
    void refreshBanner();
    void syncGraph();
    void scrollToFirstUpdated();
    ResolvedScheme startingScheme(const Network& net) const;
    QString graphTitle() const;
    QAction* historyAction(bool isUndo);   // window-wide Undo / Redo over the layer model's stack
    void connectControls();
    void connectTableAndGraph();           // a table row <-> its conv's forward op

    AppState* state_;
    TrainingLayerModel* model_;
    TrainingMemoryChart* chart_;
    TrainingGraphPane* pane_;
    FineTunePane* fineTune_;
    SchemeCompareView* compare_;
    QTabWidget* tabs_;
    QTableView* table_;
    QComboBox* modelBox_;
    std::shared_ptr<const ImportedGraph> opened_;   // the graph last opened from a file
    QComboBox* modeBox_;
    QDoubleSpinBox* budget_;
    InspectorToolbar* toolbar_;   // owns the controls below
    MemoryCards* cards_;
    SchemeBanner* banner_;
    InspectorFiles* files_;   // scheme / ledger / graph files and the TinyEngine export
    std::shared_ptr<const Network> graphNet_;   // the network pane_'s graph was built from
    AutodiffMode graphMode_ = AutodiffMode::Correct;
    bool updating_ = false;
};

}  // namespace tinyscope::ui
