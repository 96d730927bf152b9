#include "InspectorFiles.h"

#include "AppState.h"
#include "Error.h"
#include "ExportDialog.h"
#include "TrainingGraphPane.h"
#include "TrainingLayerModel.h"
#include "graph/LedgerCsv.h"
#include "graph/SchemeEdit.h"
#include "graph/SparseScheme.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "space/SpaceTransfer.h"
#include "workspace/Workspace.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

namespace tinyscope::ui {

namespace {

// Runs a throwing file action; its error goes to a message box titled `what`.
template <class F>
bool orWarn(QWidget* parent, const QString& what, F&& f)
{
    try {
        f();
        return true;
    } catch (const std::exception& e) {
        QMessageBox::warning(parent, what, QString::fromUtf8(e.what()));
        return false;
    }
}

}  // namespace

InspectorFiles::InspectorFiles(AppState* state, TrainingLayerModel* model, TrainingGraphPane* pane, QWidget* dialogParent)
    : QObject(dialogParent), state_(state), model_(model), pane_(pane), parent_(dialogParent)
{
}

InspectorFiles::~InspectorFiles() = default;

void InspectorFiles::loadScheme(const QString& path)
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty())
        throw InputError(path.toStdString() + ": choose a model with a training graph first");
    const Network& net = model_->network();
    const ResolvedScheme r = SparseScheme::loadFile(path.toStdString()).resolve(net, path.toStdString());
    model_->applyScheme(r, QStringLiteral("open %1").arg(QFileInfo(path).fileName()));
}

void InspectorFiles::saveScheme(const QString& path) const
{
    if (!model_->hasNetwork()) throw InputError(path.toStdString() + ": no model to save a scheme for");
    sparseSchemeOf(model_->scheme(), model_->network()).saveFile(path.toStdString());
}

void InspectorFiles::exportLedgerCsv(const QString& path) const
{
    if (!model_->hasLedger()) throw InputError(path.toStdString() + ": no memory ledger to export");
    writeFileAtomic(path.toStdString(), memoryLedgerCsv(model_->ledger(), model_->network(), model_->schemeDescription().toStdString(),
                                                        model_->findings()));
}

void InspectorFiles::setWeights(const QString& model, const QString& paramsPickle)
{
    weights_[model] = paramsPickle;
    Q_EMIT state_->message(QStringLiteral("%1 exports with the int8 weights of %2").arg(model, paramsPickle));
}

ExportRequest InspectorFiles::exportRequest(const QString& modelKey) const
{
    if (!model_->hasNetwork()) throw InputError("no model with an int8 lowering is selected");
    ExportRequest rq;
    rq.scheme = sparseSchemeOf(model_->scheme(), model_->network());   // throws when tiny-training's keys cannot express the choice
    rq.scheme_label = model_->schemeDescription().toStdString();
    if (modelKey == inspectorOpenedKey())
        throw InputError("the opened graph's network is no zoo model, so it cannot be exported again from here: choose a zoo model or "
                         "the design-space subnet");
    if (modelKey == inspectorSubnetKey()) {
        // The selected subnet with the weights of the workspace's supernet (in a workspace
        // without one, the shipped supernet's, the subnet transferred: named so in the export).
        const SupernetTarget target = supernetTarget(state_->workspace());
        rq.model = ModelSource::subnet(target.space, transferConfig(state_->subnet(), state_->space(), target.space), target.supernet);
        rq.name = target.transferred ? "subnet-transferred-to-" + target.space.name : "subnet";
    } else {
        const std::string params = weights_.value(modelKey).toStdString();
        rq.model = params.empty() ? ModelSource::zoo(modelKey.toStdString()) : ModelSource::zooWithParams(modelKey.toStdString(), params);
        rq.name = modelKey.toStdString();
    }
    return rq;
}

void InspectorFiles::schemeFileDialog(bool save)
{
    const QString filter = QStringLiteral("tiny-training config (*.json *.yaml *.yml)");
    const QString what = save ? QStringLiteral("Save scheme") : QStringLiteral("Open scheme");
    const QString p = save ? QFileDialog::getSaveFileName(parent_, what, QStringLiteral("scheme.yaml"), filter)
                           : QFileDialog::getOpenFileName(parent_, what, QString(), filter);
    if (p.isEmpty()) return;
    if (orWarn(parent_, what, [&] { save ? saveScheme(p) : loadScheme(p); }))
        Q_EMIT state_->message((save ? QStringLiteral("Saved %1") : QStringLiteral("Opened %1")).arg(p));
}

void InspectorFiles::graphDialog(const QString& suffix, const QString& title)
{
    if (!pane_->hasGraph()) return;
    const QString p = QFileDialog::getSaveFileName(parent_, QStringLiteral("Export graph"),
                                                   QStringLiteral("%1-training-graph.%2").arg(QString::fromStdString(pane_->graph().model), suffix),
                                                   QStringLiteral("%1 (*.%2)").arg(suffix.toUpper(), suffix));
    if (!p.isEmpty()) pane_->exportGraph(p, title);
}

void InspectorFiles::ledgerCsvDialog()
{
    const QString p = QFileDialog::getSaveFileName(parent_, QStringLiteral("Export ledger"), QStringLiteral("ledger.csv"),
                                                   QStringLiteral("CSV (*.csv)"));
    if (!p.isEmpty() && orWarn(parent_, QStringLiteral("Export ledger"), [&] { exportLedgerCsv(p); }))
        Q_EMIT state_->message(QStringLiteral("Wrote %1").arg(p));
}

void InspectorFiles::weightsDialog(const QString& model)
{
    const QString p = QFileDialog::getOpenFileName(parent_, QStringLiteral("Int8 weights of %1").arg(model), QString(),
                                                   QStringLiteral("TinyEngine params (*.pkl)"));
    if (!p.isEmpty()) setWeights(model, p);
}

void InspectorFiles::exportDialog(const QString& modelKey)
{
    orWarn(parent_, QStringLiteral("TinyEngine export"), [&] {
        ExportDialog dialog(exportRequest(modelKey), parent_);
        dialog.setBoard(state_->boardName());   // the workspace's board
        dialog.exec();
    });
}

}  // namespace tinyscope::ui
