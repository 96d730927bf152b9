#include "TrainingInspectorPanel.h"

#include "InspectorToolbar.h"
#include "MemoryCards.h"
#include "RatioDelegate.h"

#include "Palette.h"
#include "ChartLegend.h"
#include "ScreenFit.h"
#include "ExportDialog.h"
#include "TrainingGraphFile.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/measure/EvaluationJob.h"
#include "space/SpacePresets.h"

#include "AppState.h"
#include "NodeInspector.h"
#include "SvgGraphView.h"
#include "TrainingGraphPane.h"
#include "TrainingLayerModel.h"
#include "TrainingMemoryChart.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/ForwardLowering.h"
#include "graph/LedgerCsv.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "io/AtomicFile.h"
#include "io/Text.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"
#include "space/SpaceTransfer.h"
#include "workspace/Workspace.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTextDocumentFragment>
#include <QSignalBlocker>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {

const char* kSubnetKey = "subnet";
const char* kOpenedKey = "opened";   // a graph opened from a file whose network is no zoo model

// The zoo model whose network the opened graph's is (same input, convs and parameters), or "".
QString matchingZooModel(const Network& net)
{
    for (const std::string& n : zooModelNames()) {
        try {
            const Network z = zooModel(n);
            if (z.input.c == net.input.c && z.input.h == net.input.h && z.input.w == net.input.w && z.numConvs() == net.numConvs() &&
                z.params() == net.params())
                return QString::fromStdString(n);
        } catch (const std::exception&) {
        }
    }
    return {};
}

}  // namespace

TrainingInspectorPanel::TrainingInspectorPanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    model_ = new TrainingLayerModel(this);
    toolbar_ = new InspectorToolbar(historyAction(true), historyAction(false));
    modelBox_ = toolbar_->modelBox;
    for (const std::string& n : zooModelNames()) modelBox_->addItem(QString::fromStdString(n), QString::fromStdString(n));
    modelBox_->insertSeparator(modelBox_->count());
    modelBox_->addItem(subnetEntryName(), QString::fromLatin1(kSubnetKey));
    modeBox_ = toolbar_->modeBox;
    budget_ = toolbar_->budget;
    publishedBox_ = toolbar_->publishedBox;
    loadPublished_ = toolbar_->loadPublished;
    biasN_ = toolbar_->biasN;
    lastK_ = toolbar_->lastK;
    scheme_ = toolbar_->scheme;
    cards_ = new MemoryCards;
    banner_ = new SchemeBanner;
    table_ = layerTable();
    chart_ = new TrainingMemoryChart;
    pane_ = new TrainingGraphPane;
    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(table_);
    left->addWidget(withWrappingLegend(chart_, chart_->chart()));   // its legend wraps, never cut
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 2);
    left->setSizes({430, 300});
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(pane_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({850, 730});
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);
    root->setSpacing(6);
    for (QWidget* w : {static_cast<QWidget*>(toolbar_), static_cast<QWidget*>(cards_), static_cast<QWidget*>(banner_)}) root->addWidget(w);
    root->addWidget(split, 1);
    connectControls();
    connectTableAndGraph();

    onSubnetChanged();
    const int start = modelBox_->findData(QStringLiteral("mcunet-5fps"));
    if (start >= 0 && start != modelBox_->currentIndex()) modelBox_->setCurrentIndex(start);   // rebuilds
    else rebuildForModel();
}

QAction* TrainingInspectorPanel::historyAction(bool isUndo)
{
    // Undo/redo with fixed labels (the step is in the tooltip). Ctrl+Z / Ctrl+Shift+Z anywhere in
    // the window while the inspector is shown (issue 19: they needed the focus inside the panel).
    QUndoStack* stack = model_->undoStack();
    const QString text = isUndo ? QStringLiteral("Undo") : QStringLiteral("Redo");
    auto* act = new QAction(text, this);
    act->setShortcuts(isUndo ? QKeySequence::Undo : QKeySequence::Redo);   // every binding (Ctrl+Shift+Z and Ctrl+Y)
    act->setShortcutContext(Qt::WindowShortcut);
    act->setEnabled(false);
    addAction(act);
    connect(act, &QAction::triggered, stack, isUndo ? &QUndoStack::undo : &QUndoStack::redo);
    connect(stack, isUndo ? &QUndoStack::canUndoChanged : &QUndoStack::canRedoChanged, act, &QAction::setEnabled);
    connect(stack, isUndo ? &QUndoStack::undoTextChanged : &QUndoStack::redoTextChanged, act,
            [act, text](const QString& step) { act->setToolTip(step.isEmpty() ? text : text + QStringLiteral(": ") + step); });
    return act;
}

QTableView* TrainingInspectorPanel::layerTable()
{
    auto* table = new QTableView;
    table->setModel(model_);
    table->setItemDelegateForColumn(TrainingLayerModel::Weight, new RatioDelegate(model_, table));
    table->setEditTriggers(QAbstractItemView::SelectedClicked | QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setTabKeyNavigation(false);   // Tab leaves the table (issue 19)
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(21);
    table->setAlternatingRowColors(false);
    QHeaderView* h = table->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::ResizeToContents);
    h->setStretchLastSection(true);   // the TinyEngine column takes what is left
    // The columns one edits stay in view on a 1280×720 screen (issue 19): bias, weight and their
    // extra bytes come right after the (bounded, middle-elided) layer name; the shape columns follow.
    for (int c : {TrainingLayerModel::Bias, TrainingLayerModel::Weight, TrainingLayerModel::Extra})
        h->moveSection(h->visualIndex(c), h->visualIndex(TrainingLayerModel::Role));
    boundNameColumn(table, TrainingLayerModel::Layer, 150);
    return table;
}

void TrainingInspectorPanel::connectControls()
{
    connect(model_, &TrainingLayerModel::schemeChanged, this, &TrainingInspectorPanel::onSchemeChanged);
    connect(model_, &TrainingLayerModel::editRejected, this, [this](const QString& why) { Q_EMIT state_->message(why); });
    connect(modelBox_, &QComboBox::currentIndexChanged, this, [this] { rebuildForModel(); });
    connect(modeBox_, &QComboBox::currentIndexChanged, this,
            [this] { model_->setMode(static_cast<AutodiffMode>(modeBox_->currentData().toInt())); });
    connect(budget_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        chart_->setBudget(v);
        refreshTotals();
    });
    connect(toolbar_, &InspectorToolbar::loadPublishedRequested, this, [this](const QString& name) { loadPublishedScheme(name); });
    connect(toolbar_, &InspectorToolbar::biasOnlyRequested, this, &TrainingInspectorPanel::applyBiasOnly);
    connect(toolbar_, &InspectorToolbar::lastLayersRequested, this, &TrainingInspectorPanel::applyLastLayers);
    connect(toolbar_, &InspectorToolbar::resetRequested, this, &TrainingInspectorPanel::resetScheme);
    connect(toolbar_, &InspectorToolbar::schemeFileRequested, this, &TrainingInspectorPanel::chooseFile);
    connect(toolbar_, &InspectorToolbar::exportGraphRequested, this, &TrainingInspectorPanel::exportGraphDialog);
    connect(toolbar_, &InspectorToolbar::exportCsvRequested, this, &TrainingInspectorPanel::exportCsvDialog);
    connect(toolbar_, &InspectorToolbar::exportTinyEngineRequested, this, &TrainingInspectorPanel::openExportDialog);
    connect(toolbar_, &InspectorToolbar::weightsRequested, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Int8 weights of %1").arg(currentModel()), QString(),
                                                       QStringLiteral("TinyEngine params (*.pkl)"));
        if (!p.isEmpty()) setModelWeights(currentModel(), p);
    });
    connect(state_, &AppState::subnetChanged, this, &TrainingInspectorPanel::onSubnetChanged);
    connect(pane_, &TrainingGraphPane::exportFinished, this, [this](bool ok, const QString& message) {
        if (ok) Q_EMIT state_->message(message);
        else QMessageBox::warning(this, QStringLiteral("Export graph"), message);
    });
}

void TrainingInspectorPanel::connectTableAndGraph()
{
    // Table row <-> the conv's forward op in the graph.
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (updating_ || !cur.isValid() || !model_->hasNetwork() || !pane_->hasGraph()) return;
        const int layer = model_->network().convLayers()[static_cast<std::size_t>(cur.row())];
        const TrainingGraph& g = pane_->graph();
        for (int i = 0; i < g.forward_ops; ++i)
            if (g.op(i).layer == layer && g.op(i).kind == OpKind::McuConv2d) {
                updating_ = true;
                pane_->selectOp(i);
                updating_ = false;
                break;
            }
    });
    connect(pane_, &TrainingGraphPane::opSelected, this, [this](int op) {
        if (updating_ || !model_->hasNetwork() || op < 0 || op >= static_cast<int>(pane_->graph().ops.size())) return;
        const int layer = pane_->graph().op(op).layer;
        if (layer < 0 || layer >= static_cast<int>(model_->network().layers.size())) return;
        const int ci = model_->network().layer(layer).conv_index;
        if (ci < 0) return;
        updating_ = true;
        table_->selectRow(ci);
        table_->scrollTo(model_->index(ci, 0));
        updating_ = false;
    });
}

TrainingInspectorPanel::~TrainingInspectorPanel() = default;

QString TrainingInspectorPanel::subnetEntryName() { return QStringLiteral("design-space subnet"); }

QStringList TrainingInspectorPanel::modelNames() const
{
    QStringList out;
    for (int i = 0; i < modelBox_->count(); ++i)
        if (!modelBox_->itemData(i).toString().isEmpty()) out << modelBox_->itemData(i).toString();
    return out;
}

QString TrainingInspectorPanel::currentModel() const { return modelBox_->currentData().toString(); }

bool TrainingInspectorPanel::selectModel(const QString& name)
{
    const int i = modelBox_->findData(name == subnetEntryName() ? QString::fromLatin1(kSubnetKey) : name);
    if (i < 0) return false;
    if (i == modelBox_->currentIndex()) rebuildForModel();
    else modelBox_->setCurrentIndex(i);
    return true;
}

ResolvedScheme TrainingInspectorPanel::startingScheme(const Network& net) const
{
    const std::vector<PublishedScheme> published = publishedSchemesFor(net.name);
    if (!published.empty()) return published.front().scheme.resolve(net);
    return SparseScheme::biasOnly(net.numBackboneConvs() / 3).resolve(net);
}

void TrainingInspectorPanel::rebuildForModel()
{
    const QString key = currentModel();
    if (key == QLatin1String(kOpenedKey) && opened_) {
        showOpenedGraph();
        return;
    }
    std::shared_ptr<Network> net;
    try {
        if (key == QLatin1String(kSubnetKey))
            net = std::make_shared<Network>(networkFromSubnet(state_->space(), state_->subnet(), "design-space subnet"));
        else
            net = std::make_shared<Network>(zooModel(key.toStdString()));
    } catch (const std::exception& e) {
        model_->clearNetwork();
        pane_->clearGraph(QString::fromUtf8(e.what()));
        return;
    }
    const QString obstacle = QString::fromStdString(loweringObstacle(*net));
    const ResolvedScheme start = startingScheme(*net);
    graphNet_.reset();
    // Published schemes and the pattern ranges of this model.
    publishedBox_->clear();
    for (const PublishedScheme& p : publishedSchemesFor(net->name)) publishedBox_->addItem(QString::fromStdString(p.name));
    publishedBox_->setEnabled(publishedBox_->count() > 0);
    loadPublished_->setEnabled(publishedBox_->count() > 0);
    if (publishedBox_->count() == 0) publishedBox_->addItem(QStringLiteral("none for this model"));
    biasN_->setRange(0, net->numBackboneConvs());
    lastK_->setRange(0, net->numBackboneConvs());
    biasN_->setValue(start.n_bias_update);
    lastK_->setValue(std::min(4, net->numBackboneConvs()));
    model_->setNetwork(std::move(net), start, static_cast<AutodiffMode>(modeBox_->currentData().toInt()), obstacle);
    scrollToFirstUpdated();
}

void TrainingInspectorPanel::scrollToFirstUpdated()
{
    if (!model_->hasNetwork()) return;
    // Queued: after a model reset the view lays out its rows first.
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (!model_->hasNetwork() || model_->rowCount() == 0) return;
            const int row = std::min(model_->scheme().first_updated, model_->rowCount() - 1);
            table_->scrollTo(model_->index(std::max(0, row - 1), 0), QAbstractItemView::PositionAtTop);
        },
        Qt::QueuedConnection);
}

void TrainingInspectorPanel::onSubnetChanged()
{
    const int i = modelBox_->findData(QString::fromLatin1(kSubnetKey));
    if (i >= 0) {
        const SubnetConfig& c = state_->subnet();
        modelBox_->setItemText(i, QStringLiteral("%1 (%2 px, %3)")
                                      .arg(subnetEntryName())
                                      .arg(c.image_size)
                                      .arg(QString::fromStdString(state_->space().name)));
    }
    if (currentModel() == QLatin1String(kSubnetKey)) rebuildForModel();
}

bool TrainingInspectorPanel::loadPublishedScheme(const QString& name)
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty()) return false;
    const Network& net = model_->network();
    for (const PublishedScheme& p : publishedSchemesFor(net.name))
        if (name == QString::fromStdString(p.name) || name == QString::fromStdString(p.id())) {
            model_->applyScheme(p.scheme.resolve(net), QStringLiteral("load %1").arg(QString::fromStdString(p.id())));
            publishedBox_->setCurrentText(QString::fromStdString(p.name));
            scrollToFirstUpdated();
            return true;
        }
    return false;
}

void TrainingInspectorPanel::applyBiasOnly(int n)
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty()) return;
    model_->applyScheme(SparseScheme::biasOnly(std::min(n, model_->network().numBackboneConvs())).resolve(model_->network()),
                        QStringLiteral("bias-only, last %1").arg(n));
    scrollToFirstUpdated();
}

void TrainingInspectorPanel::applyLastLayers(int k)
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty()) return;
    const Network& net = model_->network();
    model_->applyScheme(SparseScheme::lastLayers(net, std::min(k, net.numBackboneConvs())).resolve(net),
                        QStringLiteral("last %1 layers").arg(k));
    scrollToFirstUpdated();
}

void TrainingInspectorPanel::resetScheme()
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty()) return;
    model_->applyScheme(classifierOnlyScheme(model_->network()), QStringLiteral("reset"));
}

void TrainingInspectorPanel::setAutodiffMode(AutodiffMode mode) { modeBox_->setCurrentIndex(modeBox_->findData(int(mode))); }

void TrainingInspectorPanel::setBudgetKB(double kb) { budget_->setValue(kb); }

double TrainingInspectorPanel::budgetKB() const { return budget_->value(); }

void TrainingInspectorPanel::onSchemeChanged()
{
    refreshTotals();
    if (model_->hasLedger()) chart_->setLedger(model_->ledger(), budget_->value());
    else chart_->clearLedger();
    refreshBanner();
    scheme_->setText(model_->hasNetwork() ? QStringLiteral("<b>Scheme:</b> %1").arg(model_->schemeDescription().toHtmlEscaped())
                                          : QString());
    scheme_->setToolTip(model_->hasNetwork() ? model_->schemeDescription() : QString());
    if (!updating_) syncGraph();
    Q_EMIT updated();
}

void TrainingInspectorPanel::syncGraph()
{
    if (!model_->hasNetwork()) return;
    if (!model_->obstacle().isEmpty()) {
        graphNet_.reset();
        pane_->clearGraph(QStringLiteral("%1 has no int8 training graph: %2")
                              .arg(QString::fromStdString(model_->network().name), model_->obstacle()));
        return;
    }
    const std::shared_ptr<const Network> net = model_->networkPtr();
    const AutodiffMode mode = model_->mode();
    // A bias toggle (or a weight toggle at the channel count the graph was built with) only
    // re-selects the outputs of the built graph; anything else rebuilds it and lays it out again.
    if (graphNet_ == net && graphMode_ == mode && pane_->hasGraph() && selectOutputs(pane_->graph(), *net, model_->scheme())) {
        pane_->outputsChanged();
        return;
    }
    pane_->setGraph(buildTrainingGraph(*net, model_->scheme(), mode), net);
    graphNet_ = net;
    graphMode_ = mode;
}

void TrainingInspectorPanel::showTrainingGraph(TrainingGraph g, const QString& title, std::shared_ptr<const Network> net,
                                               const ResolvedScheme* scheme)
{
    const AutodiffMode mode = g.mode;
    pane_->setGraph(std::move(g), net);
    // Edits rebuild from the network; the shown graph is not re-selected (graphNet_ stays empty).
    graphNet_.reset();
    updating_ = true;
    if (net && scheme) {
        setAutodiffMode(mode);
        model_->setNetwork(net, *scheme, mode, QString::fromStdString(loweringObstacle(*net)));
    } else {
        model_->clearNetwork();
    }
    updating_ = false;
    Q_EMIT state_->message(QStringLiteral("Showing %1").arg(title));
}

void TrainingInspectorPanel::setModelWeights(const QString& model, const QString& paramsPickle)
{
    weights_[model] = paramsPickle;
    Q_EMIT state_->message(QStringLiteral("%1 exports with the int8 weights of %2").arg(model, paramsPickle));
}

void TrainingInspectorPanel::showImportedGraph(const ImportedGraph& im)
{
    const QString title = QFileInfo(QString::fromStdString(im.source)).fileName();
    // The picker names what is shown (issue 19: it kept naming the previous model): the zoo model the
    // graph's network is, whose Export then takes the opened params, or an "opened: <file>" entry.
    const QString zoo = matchingZooModel(im.network);
    if (!zoo.isEmpty() && im.params) {
        const QString params = companionParams(QString::fromStdString(im.source));
        if (!params.isEmpty()) weights_[zoo] = params;
    }
    {
        const QSignalBlocker quiet(modelBox_);
        int i = zoo.isEmpty() ? -1 : modelBox_->findData(zoo);
        if (i < 0) {
            i = modelBox_->findData(QString::fromLatin1(kOpenedKey));
            if (i < 0) {
                modelBox_->addItem(QString(), QString::fromLatin1(kOpenedKey));
                i = modelBox_->count() - 1;
            }
            modelBox_->setItemText(i, QStringLiteral("opened: ") + title);
        }
        modelBox_->setCurrentIndex(i);
    }
    opened_ = std::make_shared<ImportedGraph>(im);
    showOpenedGraph();
}

void TrainingInspectorPanel::showOpenedGraph()
{
    const ImportedGraph& im = *opened_;
    auto net = std::make_shared<const Network>(im.network);
    const ResolvedScheme scheme = im.scheme.resolve(im.network, im.source);
    showTrainingGraph(im.graph, QFileInfo(QString::fromStdString(im.source)).fileName(), net, &scheme);
}

ExportRequest TrainingInspectorPanel::exportRequest() const
{
    if (!model_->hasNetwork()) throw InputError("no model with an int8 lowering is selected");
    if (!scratch_) const_cast<TrainingInspectorPanel*>(this)->scratch_ = std::make_unique<QTemporaryDir>();
    const QString schemeFile = scratch_->path() + QStringLiteral("/scheme.json");
    saveSchemeFile(schemeFile);   // throws when tiny-training's keys cannot express the choice
    ExportRequest rq;
    rq.scheme = schemeFile.toStdString();
    const QString model = currentModel();
    if (model == QLatin1String(kOpenedKey))
        throw InputError("the opened graph's network is no zoo model, so it cannot be exported again from here: choose a zoo model or "
                         "the design-space subnet");
    if (model == QLatin1String(kSubnetKey)) {
        // The selected subnet with the weights of the workspace's supernet (in a workspace
        // without one, the shipped supernet's, the subnet transferred: named so in the export).
        const SupernetTarget target = supernetTarget(state_->workspace());
        const SubnetConfig c = transferConfig(state_->subnet(), state_->space(), target.space);
        const std::string cfg = (scratch_->path() + QStringLiteral("/subnet.json")).toStdString();
        writeJsonFile(cfg, c.toJson());
        rq.model.supernet = target.supernet;
        rq.model.config = cfg;
        rq.model.space = target.space.name;
        rq.name = target.transferred ? "subnet-transferred-to-" + target.space.name : "subnet";
    } else {
        rq.model.zoo = model.toStdString();
        rq.model.params = weights_.value(model).toStdString();
        rq.name = model.toStdString();
    }
    return rq;
}

void TrainingInspectorPanel::openExportDialog()
{
    try {
        ExportDialog dialog(exportRequest(), this);
        dialog.exec();
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("TinyEngine export"), QString::fromUtf8(e.what()));
    }
}

void TrainingInspectorPanel::refreshTotals() { cards_->showLedger(model_->hasLedger() ? &model_->ledger() : nullptr, budget_->value()); }

QString TrainingInspectorPanel::totalsText() const { return cards_->text(); }

void TrainingInspectorPanel::refreshBanner() { banner_->showFindings(*model_); }

QString TrainingInspectorPanel::bannerText() const { return banner_->text(); }

void TrainingInspectorPanel::loadSchemeFile(const QString& path)
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty())
        throw InputError(path.toStdString() + ": choose a model with a training graph first");
    const Network& net = model_->network();
    const ResolvedScheme r = SparseScheme::loadFile(path.toStdString()).resolve(net, path.toStdString());
    model_->applyScheme(r, QStringLiteral("open %1").arg(QFileInfo(path).fileName()));
}

void TrainingInspectorPanel::saveSchemeFile(const QString& path) const
{
    if (!model_->hasNetwork()) throw InputError(path.toStdString() + ": no model to save a scheme for");
    sparseSchemeOf(model_->scheme(), model_->network()).saveFile(path.toStdString());
}

void TrainingInspectorPanel::exportLedgerCsv(const QString& path) const
{
    if (!model_->hasLedger()) throw InputError(path.toStdString() + ": no memory ledger to export");
    writeFileAtomic(path.toStdString(), memoryLedgerCsv(model_->ledger(), model_->network(), model_->schemeDescription().toStdString(),
                                                        model_->findings()));
}

QString TrainingInspectorPanel::graphTitle() const
{
    const TrainingGraph& g = pane_->graph();
    return QStringLiteral("%1 — %2 — %3 ops kept, %4 pruned (%5 mode)")
        .arg(QString::fromStdString(g.model), model_->hasNetwork() ? model_->schemeDescription() : QStringLiteral("imported"))
        .arg(g.liveOps())
        .arg(g.prunedOps())
        .arg(QString::fromLatin1(autodiffModeName(g.mode)));
}

void TrainingInspectorPanel::chooseFile(bool save)
{
    const QString filter = QStringLiteral("tiny-training config (*.json *.yaml *.yml)");
    try {
        if (save) {
            const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Save scheme"), QStringLiteral("scheme.yaml"), filter);
            if (p.isEmpty()) return;
            saveSchemeFile(p);
            Q_EMIT state_->message(QStringLiteral("Saved %1").arg(p));
        } else {
            const QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Open scheme"), QString(), filter);
            if (p.isEmpty()) return;
            loadSchemeFile(p);
            Q_EMIT state_->message(QStringLiteral("Opened %1").arg(p));
        }
    } catch (const std::exception& e) {
        QMessageBox::warning(this, save ? QStringLiteral("Save scheme") : QStringLiteral("Open scheme"), QString::fromUtf8(e.what()));
    }
}

void TrainingInspectorPanel::exportGraphDialog(const QString& suffix)
{
    if (!pane_->hasGraph()) return;
    const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Export graph"),
                                                   QStringLiteral("%1-training-graph.%2").arg(QString::fromStdString(pane_->graph().model), suffix),
                                                   QStringLiteral("%1 (*.%2)").arg(suffix.toUpper(), suffix));
    if (!p.isEmpty()) pane_->exportGraph(p, graphTitle());
}

void TrainingInspectorPanel::exportCsvDialog()
{
    const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Export ledger"), QStringLiteral("ledger.csv"),
                                                   QStringLiteral("CSV (*.csv)"));
    if (p.isEmpty()) return;
    try {
        exportLedgerCsv(p);
        Q_EMIT state_->message(QStringLiteral("Wrote %1").arg(p));
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Export ledger"), QString::fromUtf8(e.what()));
    }
}

bool TrainingInspectorPanel::waitForGraph(int timeoutMs) { return pane_->waitForLayout(timeoutMs); }

}  // namespace tinyscope::ui
