#include "TrainingInspectorPanel.h"

#include "SchemeCompareView.h"

#include "InspectorFiles.h"
#include "InspectorToolbar.h"
#include "MemoryCards.h"
#include "RatioDelegate.h"
#include "ChartLegend.h"
#include "ExportDialog.h"
#include "FineTunePane.h"
#include "TrainingGraphFile.h"
#include "AppState.h"
#include "TrainingGraphPane.h"
#include "TrainingLayerModel.h"
#include "TourActions.h"
#include "TrainingMemoryChart.h"
#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/ForwardLowering.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QUndoStack>
#include <QVBoxLayout>

namespace tinyscope::ui {

TrainingInspectorPanel::TrainingInspectorPanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    model_ = new TrainingLayerModel(this);
    toolbar_ = new InspectorToolbar(historyAction(true), historyAction(false));
    modelBox_ = toolbar_->modelBox;
    for (const std::string& n : zooModelNames()) modelBox_->addItem(QString::fromStdString(n), QString::fromStdString(n));
    modelBox_->insertSeparator(modelBox_->count());
    modelBox_->addItem(subnetEntryName(), inspectorSubnetKey());
    modeBox_ = toolbar_->modeBox;
    budget_ = toolbar_->budget;
    budget_->setValue(static_cast<double>(state_->board().sram_bytes) / 1024.0);   // the workspace's board (issue 47)
    cards_ = new MemoryCards;
    banner_ = new SchemeBanner;
    table_ = trainingLayerTable(model_);
    chart_ = new TrainingMemoryChart;
    pane_ = new TrainingGraphPane;
    files_ = new InspectorFiles(state_, model_, pane_, this);
    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(table_);
    auto* chartBox = new QWidget;
    auto* chartLayout = new QVBoxLayout(chartBox);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->setSpacing(2);
    auto* fixedAxes = new QCheckBox(QStringLiteral("Axes fixed to the full update"));
    fixedAxes->setChecked(chart_->fixedAxes());
    fixedAxes->setToolTip(TrainingMemoryChart::fixedAxesToolTip());
    connect(fixedAxes, &QCheckBox::toggled, chart_, &TrainingMemoryChart::setFixedAxes);
    chartLayout->addWidget(fixedAxes);
    chartLayout->addWidget(withWrappingLegend(chart_, chart_->chart()), 1);   // its legend wraps, never cut
    left->addWidget(chartBox);
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 2);
    left->setSizes({430, 300});
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    fineTune_ = new FineTunePane(state_, model_, files_, [this] { return currentModel(); });
    fineTune_->setBudgetKB(budget_->value());
    tabs_ = new QTabWidget;
    tabs_->addTab(pane_, QStringLiteral("Training graph"));
    tabs_->addTab(fineTune_, QStringLiteral("Fine-tune"));
    compare_ = new SchemeCompareView(model_, fineTune_->scatter());
    tabs_->addTab(compare_, QStringLiteral("Compare schemes"));
    split->addWidget(tabs_);
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

void TrainingInspectorPanel::connectControls()
{
    connect(model_, &TrainingLayerModel::schemeChanged, this, &TrainingInspectorPanel::onSchemeChanged);
    connect(model_, &TrainingLayerModel::editRejected, this, [this](const QString& why) { Q_EMIT state_->message(why); });
    connect(modelBox_, &QComboBox::currentIndexChanged, this, [this] { rebuildForModel(); });
    connect(modeBox_, &QComboBox::currentIndexChanged, this,
            [this] { model_->setMode(static_cast<AutodiffMode>(modeBox_->currentData().toInt())); });
    connect(budget_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        chart_->setBudget(v);
        fineTune_->setBudgetKB(v);
        refreshTotals();
    });
    connect(state_, &AppState::boardChanged, this, [this] { budget_->setValue(static_cast<double>(state_->board().sram_bytes) / 1024.0); });
    connect(toolbar_, &InspectorToolbar::loadPublishedRequested, this, [this](const QString& name) { loadPublishedScheme(name); });
    connect(toolbar_, &InspectorToolbar::biasOnlyRequested, this, &TrainingInspectorPanel::applyBiasOnly);
    connect(toolbar_, &InspectorToolbar::lastLayersRequested, this, &TrainingInspectorPanel::applyLastLayers);
    connect(toolbar_, &InspectorToolbar::resetRequested, this, &TrainingInspectorPanel::resetScheme);
    connect(toolbar_, &InspectorToolbar::schemeFileRequested, files_, &InspectorFiles::schemeFileDialog);
    connect(toolbar_, &InspectorToolbar::exportGraphRequested, this, [this](const QString& suffix) { files_->graphDialog(suffix, graphTitle()); });
    connect(toolbar_, &InspectorToolbar::exportCsvRequested, files_, &InspectorFiles::ledgerCsvDialog);
    connect(toolbar_, &InspectorToolbar::exportTinyEngineRequested, this, &TrainingInspectorPanel::openExportDialog);
    connect(toolbar_, &InspectorToolbar::weightsRequested, this, [this] { files_->weightsDialog(currentModel()); });
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

void TrainingInspectorPanel::addTourActions(TourActions& actions)
{
    actions.addAction("model", [this](const Json& g, TourRun&) {
        const QString name = QString::fromStdString(g["model"].get<std::string>());
        if (!selectModel(name)) throw InputError("the Training inspector has no model '" + name.toStdString() + "'");
        return true;
    });
    actions.addAction("scheme", [this](const Json& g, TourRun&) {
        if (!model_->hasNetwork()) throw InputError("the Training inspector has no model to apply a scheme to");
        if (g.contains("published")) {
            const QString name = QString::fromStdString(g["published"].get<std::string>());
            if (!loadPublishedScheme(name)) throw InputError(model_->network().name + " has no published scheme '" + name.toStdString() + "'");
        } else if (g.contains("bias_only")) {
            applyBiasOnly(g["bias_only"].get<int>());
        } else if (g.contains("last_layers")) {
            applyLastLayers(g["last_layers"].get<int>());
        } else if (g.contains("full")) {
            applyLastLayers(model_->network().numBackboneConvs());
        } else {
            resetScheme();
        }
        return true;
    });
    actions.addAction("inspector-tab", [this](const Json& g, TourRun&) {
        const bool graph = g["tab"].get<std::string>() == "graph";
        tabs_->setCurrentWidget(graph ? static_cast<QWidget*>(pane_) : fineTune_);
        return true;
    });
    actions.addAction("budget", [this](const Json& g, TourRun&) {
        setBudgetKB(g["kb"].get<double>());
        return true;
    });
    actions.addAction("export-dialog", [this](const Json&, TourRun& run) {
        auto* d = new ExportDialog(exportRequest(), window());
        d->setBoard(state_->boardName());   // the workspace's board
        d->setAttribute(Qt::WA_DeleteOnClose);
        d->show();
        run.keepDialog(d);
        return true;
    });
    actions.addTarget("inspector-toolbar", [this] { return findChild<InspectorToolbar*>(); });
    actions.addTarget("memory-cards", [this] { return findChild<MemoryCards*>(); });
    actions.addTarget("memory-chart", [this]() -> QWidget* { return chart_; });
    actions.addTarget("scheme-table", [this]() -> QWidget* { return table_; });
    actions.addTarget("training-graph", [this]() -> QWidget* { return pane_; });
    actions.addTarget("fine-tune", [this]() -> QWidget* { return fineTune_; });
}

QString TrainingInspectorPanel::subnetEntryName() { return inspectorSubnetEntryName(); }

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
    const int i = modelBox_->findData(name == subnetEntryName() ? inspectorSubnetKey() : name);
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
    if (key == inspectorOpenedKey() && opened_) {
        showOpenedGraph();
        return;
    }
    std::shared_ptr<Network> net;
    try {
        if (key == inspectorSubnetKey())
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
    QStringList published;
    for (const PublishedScheme& p : publishedSchemesFor(net->name)) published << QString::fromStdString(p.name);
    toolbar_->showModel(published, net->numBackboneConvs(), start.n_bias_update);
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
    const int i = modelBox_->findData(inspectorSubnetKey());
    if (i >= 0) {
        const SubnetConfig& c = state_->subnet();
        modelBox_->setItemText(i, QStringLiteral("%1 (%2 px, %3)")
                                      .arg(subnetEntryName())
                                      .arg(c.image_size)
                                      .arg(QString::fromStdString(state_->space().name)));
    }
    if (currentModel() == inspectorSubnetKey()) rebuildForModel();
}

bool TrainingInspectorPanel::loadPublishedScheme(const QString& name)
{
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty()) return false;
    const Network& net = model_->network();
    for (const PublishedScheme& p : publishedSchemesFor(net.name))
        if (name == QString::fromStdString(p.name) || name == QString::fromStdString(p.id())) {
            model_->applyScheme(p.scheme.resolve(net), QStringLiteral("load %1").arg(QString::fromStdString(p.id())));
            toolbar_->publishedBox->setCurrentText(QString::fromStdString(p.name));
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

bool TrainingInspectorPanel::applySchemePattern(const QString& pattern)
{
    if (currentModel() != inspectorSubnetKey() && !selectModel(subnetEntryName())) return false;
    if (!model_->hasNetwork() || !model_->obstacle().isEmpty()) {
        Q_EMIT state_->message(QStringLiteral("Training inspector: the scheme %1 was not applied (%2)")
                                   .arg(pattern, model_->hasNetwork() ? model_->obstacle() : QStringLiteral("no network for the subnet")));
        return false;
    }
    const Network& net = model_->network();
    ResolvedScheme scheme;
    try {
        // By name, never as a file: the pattern comes from a search report.
        scheme = schemeByName(pattern.toStdString(), &net).resolve(net, "scheme '" + pattern.toStdString() + "'");
    } catch (const std::exception& e) {
        Q_EMIT state_->message(QStringLiteral("Training inspector: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
    model_->applyScheme(scheme, QStringLiteral("scheme %1").arg(pattern));
    scrollToFirstUpdated();
    return true;
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
    if (model_->hasLedger()) {
        chart_->setReferenceLedger(model_->fullUpdateLedger());   // the fixed axes' scale (microseconds)
        chart_->setLedger(model_->ledger(), budget_->value());
    } else {
        chart_->clearLedger();
    }
    refreshBanner();
    toolbar_->showScheme(model_->hasNetwork() ? model_->schemeDescription() : QString());
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

void TrainingInspectorPanel::setModelWeights(const QString& model, const QString& paramsPickle) { files_->setWeights(model, paramsPickle); }

void TrainingInspectorPanel::showImportedGraph(const ImportedGraph& im)
{
    const QString title = QFileInfo(QString::fromStdString(im.source)).fileName();
    // The picker names what is shown (issue 19: it kept naming the previous model): the zoo model the
    // graph's network is, whose Export then takes the opened params, or an "opened: <file>" entry.
    const QString zoo = QString::fromStdString(zooModelMatching(im.network));
    if (!zoo.isEmpty() && im.params) {
        const QString params = companionParams(QString::fromStdString(im.source));
        if (!params.isEmpty()) files_->rememberWeights(zoo, params);
    }
    toolbar_->pickModel(zoo, inspectorOpenedKey(), QStringLiteral("opened: ") + title);
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

ExportRequest TrainingInspectorPanel::exportRequest() const { return files_->exportRequest(currentModel()); }

void TrainingInspectorPanel::openExportDialog() { files_->exportDialog(currentModel()); }

void TrainingInspectorPanel::refreshTotals() { cards_->showLedger(model_->hasLedger() ? &model_->ledger() : nullptr, budget_->value()); }

QString TrainingInspectorPanel::totalsText() const { return cards_->text(); }

void TrainingInspectorPanel::refreshBanner() { banner_->showFindings(*model_); }

QString TrainingInspectorPanel::bannerText() const { return banner_->text(); }

void TrainingInspectorPanel::loadSchemeFile(const QString& path) { files_->loadScheme(path); }

void TrainingInspectorPanel::saveSchemeFile(const QString& path) const { files_->saveScheme(path); }

void TrainingInspectorPanel::exportLedgerCsv(const QString& path) const { files_->exportLedgerCsv(path); }

QString TrainingInspectorPanel::graphTitle() const
{
    const TrainingGraph& g = pane_->graph();
    return QStringLiteral("%1 — %2 — %3 ops kept, %4 pruned (%5 mode)")
        .arg(QString::fromStdString(g.model), model_->hasNetwork() ? model_->schemeDescription() : QStringLiteral("imported"))
        .arg(g.liveOps())
        .arg(g.prunedOps())
        .arg(QString::fromLatin1(autodiffModeName(g.mode)));
}

bool TrainingInspectorPanel::waitForGraph(int timeoutMs) { return pane_->waitForLayout(timeoutMs); }

}  // namespace tinyscope::ui
