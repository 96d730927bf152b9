#pragma once
// The Training inspector's files: tiny-training scheme files (open/save), the ledger as CSV, the
// graph as SVG/PNG/DOT, and the TinyEngine export of the chosen model — with the int8 weights
// the user chose (or a graph opened from a file brought) per zoo model this session. The
// throwing functions name the file and the reason; the *Dialog ones ask for a path and show
// errors in a message box. docs/TRAINING_INSPECTOR.md describes the actions.
#include "nn/quantize/QuantizationJob.h"

#include <QMap>
#include <QObject>
#include <QString>

#include <memory>

class QWidget;

namespace tinyscope::ui {

class AppState;
class TrainingGraphPane;
class TrainingLayerModel;

// The model picker's data for the entries that are not zoo models.
inline QString inspectorSubnetKey() { return QStringLiteral("subnet"); }
// The picker's text for that entry (TrainingInspectorPanel::subnetEntryName; the Fine-tune tab names it so too).
inline QString inspectorSubnetEntryName() { return QStringLiteral("design-space subnet"); }
inline QString inspectorOpenedKey() { return QStringLiteral("opened"); }   // a graph from a file, no zoo model

class InspectorFiles : public QObject {
    Q_OBJECT
public:
    InspectorFiles(AppState* state, TrainingLayerModel* model, TrainingGraphPane* pane, QWidget* dialogParent);
    ~InspectorFiles() override;

    void loadScheme(const QString& path);   // one undoable step
    void saveScheme(const QString& path) const;
    void exportLedgerCsv(const QString& path) const;

    // The int8 params pickle a zoo model exports with ("" = the model's own or none).
    void setWeights(const QString& model, const QString& paramsPickle);
    void rememberWeights(const QString& model, const QString& paramsPickle) { weights_[model] = paramsPickle; }
    QString weightsOf(const QString& model) const { return weights_.value(model); }
    // The export of `modelKey` (a zoo name or inspectorSubnetKey()) with the current scheme;
    // throws InputError when the scheme or the model cannot be written.
    ExportRequest exportRequest(const QString& modelKey) const;

    void schemeFileDialog(bool save);
    void graphDialog(const QString& suffix, const QString& title);
    void ledgerCsvDialog();
    void weightsDialog(const QString& model);
    void exportDialog(const QString& modelKey);

private:
    AppState* state_;
    TrainingLayerModel* model_;
    TrainingGraphPane* pane_;
    QWidget* parent_;
    QMap<QString, QString> weights_;   // model -> int8 params pickle chosen or imported this session
};

}  // namespace tinyscope::ui
