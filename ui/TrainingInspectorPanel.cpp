#include "TrainingInspectorPanel.h"

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

QString kb(std::int64_t bytes, int decimals = 1) { return QStringLiteral("%1 KB").arg(static_cast<double>(bytes) / 1024.0, 0, 'f', decimals); }
QString bytesText(std::int64_t b) { return QString::fromStdString(groupThousands(b)) + QStringLiteral(" B"); }

// The weight-ratio cell: a combo of 0, 1/8, 1/4, 1/2, 1 (ratios that select no channel of the
// conv are disabled); the choice is committed at once, so one click-choose is one undo step.
class RatioDelegate : public QStyledItemDelegate {
public:
    RatioDelegate(TrainingLayerModel* model, QObject* parent) : QStyledItemDelegate(parent), model_(model) {}

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex& index) const override
    {
        auto* box = new QComboBox(parent);
        const Layer& c = model_->network().conv(index.row());
        const std::pair<const char*, double> choices[] = {{"— frozen", 0.0}, {"1/8", 0.125}, {"1/4", 0.25}, {"1/2", 0.5}, {"1 (all)", 1.0}};
        for (const auto& [text, r] : choices) {
            const int k = r > 0 ? updatedChannels(c, r) : 0;
            box->addItem(r > 0 ? QStringLiteral("%1  (%2/%3)").arg(QString::fromUtf8(text)).arg(k).arg(c.cin) : QString::fromUtf8(text), r);
            if (!ratioSelectsChannels(c, r)) {
                auto* m = qobject_cast<QStandardItemModel*>(box->model());
                if (m) m->item(box->count() - 1)->setEnabled(false);
            }
        }
        connect(box, &QComboBox::activated, this, [this, box] {
            auto* self = const_cast<RatioDelegate*>(this);
            Q_EMIT self->commitData(box);
            Q_EMIT self->closeEditor(box);
        });
        return box;
    }
    void setEditorData(QWidget* editor, const QModelIndex& index) const override
    {
        auto* box = static_cast<QComboBox*>(editor);
        box->setCurrentIndex(box->findData(index.data(TrainingLayerModel::RatioRole).toDouble()));
        box->showPopup();
    }
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override
    {
        model->setData(index, static_cast<QComboBox*>(editor)->currentData(), TrainingLayerModel::RatioRole);
    }

private:
    TrainingLayerModel* model_;
};

QLabel* card()
{
    auto* l = new QLabel;
    l->setTextFormat(Qt::RichText);
    l->setFrameShape(QFrame::StyledPanel);
    l->setStyleSheet(QStringLiteral("QLabel { background: %1; border: 1px solid %2; border-radius: 4px; padding: 4px 8px; }")
                         .arg(paletteName("card.background"), paletteName("card.border")));
    l->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    return l;
}

QString cardHtml(const QString& title, const QString& value, const QString& note, const QString& colour = paletteName("text.strong"))
{
    return QStringLiteral("<div style='color:%5'>%1</div><div style='font-size:15pt; font-weight:600; color:%2'>%3</div>"
                          "<div style='color:%5'>%4</div>")
        .arg(title, colour, value, note, paletteName("text.caption"));
}

}  // namespace

TrainingInspectorPanel::TrainingInspectorPanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    model_ = new TrainingLayerModel(this);
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);
    root->setSpacing(6);

    // ---- row 1: model, autodiff, budget, history, files
    auto* row1 = new QHBoxLayout;
    modelBox_ = new QComboBox;
    for (const std::string& n : zooModelNames()) modelBox_->addItem(QString::fromStdString(n), QString::fromStdString(n));
    modelBox_->insertSeparator(modelBox_->count());
    modelBox_->addItem(subnetEntryName(), QString::fromLatin1(kSubnetKey));
    modelBox_->setToolTip(QStringLiteral("A zoo model, or the subnet selected in the Design-space panel"));
    modeBox_ = new QComboBox;
    modeBox_->addItem(QStringLiteral("correct"), int(AutodiffMode::Correct));
    modeBox_->addItem(QStringLiteral("reference (MIT)"), int(AutodiffMode::Reference));
    modeBox_->setToolTip(QStringLiteral("correct: gradients reaching a tensor twice are summed;\n"
                                        "reference: MIT's compiler (skip-path gradients lost, zero point ignored, dummy leaves)"));
    budget_ = new QDoubleSpinBox;
    budget_->setRange(1, 100000);
    budget_->setDecimals(0);
    budget_->setSuffix(QStringLiteral(" KB"));
    budget_->setValue(256);
    budget_->setToolTip(QStringLiteral("SRAM of the device; the chart's dashed line"));
    // Undo/redo with fixed labels (the step is in the tooltip), Ctrl+Z / Ctrl+Shift+Z in the panel.
    QUndoStack* stack = model_->undoStack();
    auto historyButton = [this, stack](const QString& text, const QKeySequence& key, bool isUndo) {
        auto* act = new QAction(text, this);
        act->setShortcut(key);
        act->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        act->setEnabled(false);
        addAction(act);
        connect(act, &QAction::triggered, stack, isUndo ? &QUndoStack::undo : &QUndoStack::redo);
        connect(stack, isUndo ? &QUndoStack::canUndoChanged : &QUndoStack::canRedoChanged, act, &QAction::setEnabled);
        connect(stack, isUndo ? &QUndoStack::undoTextChanged : &QUndoStack::redoTextChanged, act,
                [act, text](const QString& step) { act->setToolTip(step.isEmpty() ? text : text + QStringLiteral(": ") + step); });
        auto* b = new QToolButton;
        b->setDefaultAction(act);
        return b;
    };
    QToolButton* undo = historyButton(QStringLiteral("Undo"), QKeySequence::Undo, true);
    QToolButton* redo = historyButton(QStringLiteral("Redo"), QKeySequence::Redo, false);
    auto* open = new QPushButton(QStringLiteral("Open scheme…"));
    open->setToolTip(QStringLiteral("Load a tiny-training config (backward_config in .json/.yaml)"));
    auto* save = new QPushButton(QStringLiteral("Save scheme…"));
    save->setToolTip(QStringLiteral("Save as a tiny-training config (.json with lists, .yaml with dash strings)"));
    auto* exportB = new QToolButton;
    exportB->setText(QStringLiteral("Export"));
    exportB->setPopupMode(QToolButton::InstantPopup);
    auto* exportMenu = new QMenu(exportB);
    exportMenu->addAction(QStringLiteral("Graph as SVG…"), this, [this] { exportGraphDialog(QStringLiteral("svg")); });
    exportMenu->addAction(QStringLiteral("Graph as PNG…"), this, [this] { exportGraphDialog(QStringLiteral("png")); });
    exportMenu->addAction(QStringLiteral("Graph as DOT…"), this, [this] { exportGraphDialog(QStringLiteral("dot")); });
    exportMenu->addSeparator();
    exportMenu->addAction(QStringLiteral("Ledger as CSV…"), this, [this] { exportCsvDialog(); });
    exportMenu->addSeparator();
    exportMenu->addAction(QStringLiteral("TinyEngine graph + params…"), this, [this] { openExportDialog(); });
    exportMenu->addAction(QStringLiteral("Use int8 weights (params .pkl)…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Int8 weights of %1").arg(currentModel()), QString(),
                                                       QStringLiteral("TinyEngine params (*.pkl)"));
        if (!p.isEmpty()) setModelWeights(currentModel(), p);
    });
    exportB->setMenu(exportMenu);
    row1->addWidget(new QLabel(QStringLiteral("Model")));
    row1->addWidget(modelBox_);
    row1->addSpacing(8);
    row1->addWidget(new QLabel(QStringLiteral("Autodiff")));
    row1->addWidget(modeBox_);
    row1->addSpacing(8);
    row1->addWidget(new QLabel(QStringLiteral("SRAM budget")));
    row1->addWidget(budget_);
    row1->addStretch(1);
    row1->addWidget(undo);
    row1->addWidget(redo);
    row1->addSpacing(8);
    row1->addWidget(open);
    row1->addWidget(save);
    row1->addWidget(exportB);
    root->addLayout(row1);

    // ---- row 2: scheme actions
    auto* row2 = new QHBoxLayout;
    publishedBox_ = new QComboBox;
    publishedBox_->setMinimumWidth(150);
    publishedBox_->setToolTip(QStringLiteral("The schemes MIT published for this model (named after their analytic extra memory)"));
    loadPublished_ = new QToolButton;
    loadPublished_->setText(QStringLiteral("Load"));
    biasN_ = new QSpinBox;
    biasN_->setToolTip(QStringLiteral("Update the biases of the last N backbone convs (and nothing else but the classifier)"));
    auto* biasApply = new QToolButton;
    biasApply->setText(QStringLiteral("Apply"));
    lastK_ = new QSpinBox;
    lastK_->setToolTip(QStringLiteral("Update the last k backbone convs fully: bias and every weight"));
    auto* lastApply = new QToolButton;
    lastApply->setText(QStringLiteral("Apply"));
    auto* reset = new QToolButton;
    reset->setText(QStringLiteral("Reset"));
    reset->setToolTip(QStringLiteral("Update only the classifier"));
    scheme_ = new QLabel;
    scheme_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A scheme of many layers is a long line: it is cut at the panel's edge (whole text in the
    // tooltip) rather than widening the window.
    scheme_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    scheme_->setMinimumWidth(120);
    row2->addWidget(new QLabel(QStringLiteral("Published")));
    row2->addWidget(publishedBox_);
    row2->addWidget(loadPublished_);
    row2->addSpacing(12);
    row2->addWidget(new QLabel(QStringLiteral("Bias-only, last")));
    row2->addWidget(biasN_);
    row2->addWidget(biasApply);
    row2->addSpacing(12);
    row2->addWidget(new QLabel(QStringLiteral("Last")));
    row2->addWidget(lastK_);
    row2->addWidget(new QLabel(QStringLiteral("layers")));
    row2->addWidget(lastApply);
    row2->addSpacing(12);
    row2->addWidget(reset);
    row2->addSpacing(12);
    row2->addWidget(scheme_, 1);
    root->addLayout(row2);

    // ---- totals and warnings
    auto* cards = new QHBoxLayout;
    for (QLabel*& c : totals_) {
        c = card();
        cards->addWidget(c);
    }
    root->addLayout(cards);
    banner_ = new QLabel;
    banner_->setWordWrap(true);
    banner_->setTextFormat(Qt::RichText);
    banner_->setStyleSheet(QStringLiteral("QLabel { background: %1; border: 1px solid %2; border-radius: 4px; padding: 3px 8px; }")
                               .arg(paletteName("banner.background"), paletteName("banner.border")));
    root->addWidget(banner_);

    // ---- table + chart | graph
    table_ = new QTableView;
    table_->setModel(model_);
    table_->setItemDelegateForColumn(TrainingLayerModel::Weight, new RatioDelegate(model_, table_));
    table_->setEditTriggers(QAbstractItemView::SelectedClicked | QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(21);
    table_->setAlternatingRowColors(false);
    QHeaderView* h = table_->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::ResizeToContents);
    h->setStretchLastSection(true);   // the TinyEngine column takes what is left
    // The columns one edits stay in view on a 1280×720 screen (issue 19): bias, weight and their
    // extra bytes come right after the (bounded, middle-elided) layer name; the shape columns follow.
    for (int c : {TrainingLayerModel::Bias, TrainingLayerModel::Weight, TrainingLayerModel::Extra})
        h->moveSection(h->visualIndex(c), h->visualIndex(TrainingLayerModel::Role));
    boundNameColumn(table_, TrainingLayerModel::Layer, 150);
    chart_ = new TrainingMemoryChart;
    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(table_);
    left->addWidget(withWrappingLegend(chart_, chart_->chart()));   // its legend wraps, never cut
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 2);
    left->setSizes({430, 300});
    pane_ = new TrainingGraphPane;
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(pane_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({850, 730});
    root->addWidget(split, 1);

    // ---- wiring
    connect(model_, &TrainingLayerModel::schemeChanged, this, &TrainingInspectorPanel::onSchemeChanged);
    connect(model_, &TrainingLayerModel::editRejected, this, [this](const QString& why) { Q_EMIT state_->message(why); });
    connect(modelBox_, &QComboBox::currentIndexChanged, this, [this] { rebuildForModel(); });
    connect(modeBox_, &QComboBox::currentIndexChanged, this,
            [this] { model_->setMode(static_cast<AutodiffMode>(modeBox_->currentData().toInt())); });
    connect(budget_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        chart_->setBudget(v);
        refreshTotals();
    });
    connect(loadPublished_, &QToolButton::clicked, this, [this] { loadPublishedScheme(publishedBox_->currentText()); });
    connect(biasApply, &QToolButton::clicked, this, [this] { applyBiasOnly(biasN_->value()); });
    connect(lastApply, &QToolButton::clicked, this, [this] { applyLastLayers(lastK_->value()); });
    connect(reset, &QToolButton::clicked, this, &TrainingInspectorPanel::resetScheme);
    connect(open, &QPushButton::clicked, this, [this] { chooseFile(false); });
    connect(save, &QPushButton::clicked, this, [this] { chooseFile(true); });
    connect(state_, &AppState::subnetChanged, this, &TrainingInspectorPanel::onSubnetChanged);
    connect(pane_, &TrainingGraphPane::exportFinished, this, [this](bool ok, const QString& message) {
        if (ok) Q_EMIT state_->message(message);
        else QMessageBox::warning(this, QStringLiteral("Export graph"), message);
    });
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

    onSubnetChanged();
    const int start = modelBox_->findData(QStringLiteral("mcunet-5fps"));
    if (start >= 0 && start != modelBox_->currentIndex()) modelBox_->setCurrentIndex(start);   // rebuilds
    else rebuildForModel();
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

void TrainingInspectorPanel::refreshTotals()
{
    if (!model_->hasLedger()) {
        for (QLabel* c : totals_) c->setText(cardHtml(QStringLiteral("—"), QStringLiteral("—"), QString()));
        return;
    }
    const MemoryLedger& m = model_->ledger();
    const std::int64_t budget = static_cast<std::int64_t>(budget_->value() * 1024.0);
    const ExtraMemory& e = m.extra;
    totals_[0]->setText(cardHtml(QStringLiteral("Extra memory (tiny-training analytic)"), kb(e.total(), 2),
                                 QStringLiteral("masks %1 · biases %2 · inputs %3 · weights %4")
                                     .arg(kb(e.masks()), kb(e.biases), kb(e.saved_inputs + e.classifier_input), kb(e.weights))));
    totals_[0]->setToolTip(QStringLiteral("%1 (%2 bits)").arg(bytesText(e.total())).arg(e.totalBits()));
    totals_[1]->setText(cardHtml(QStringLiteral("Training peak SRAM"), kb(m.peak_bytes),
                                 QStringLiteral("with reordering · %1 without").arg(kb(m.peak_bytes_no_reorder)),
                                 paletteName(m.peak_bytes > budget ? "status.over" : "text.strong")));
    totals_[1]->setToolTip(QStringLiteral("schedule peak: %1 with operator reordering / in-place update, %2 without")
                               .arg(bytesText(m.peak_bytes), bytesText(m.peak_bytes_no_reorder)));
    totals_[2]->setText(cardHtml(QStringLiteral("Inference peak SRAM"), kb(m.inference_peak_bytes),
                                 QStringLiteral("largest forward working set")));
    totals_[2]->setToolTip(bytesText(m.inference_peak_bytes));
    const std::int64_t total = m.inference_peak_bytes + e.total();
    const bool fits = total <= budget;
    totals_[3]->setText(cardHtml(QStringLiteral("Inference peak + extra vs %1 KB").arg(budget_->value(), 0, 'f', 0), kb(total),
                                 fits ? QStringLiteral("fits, %1 to spare").arg(kb(budget - total))
                                      : QStringLiteral("exceeds the budget by %1").arg(kb(total - budget)),
                                 paletteName(fits ? "status.fits" : "status.over")));
    totals_[3]->setToolTip(QStringLiteral("%1 + %2 = %3 (the training-budget search's constraint)")
                               .arg(bytesText(m.inference_peak_bytes), bytesText(e.total()), bytesText(total)));
}

QString TrainingInspectorPanel::totalsText() const
{
    QStringList parts;
    for (QLabel* c : totals_) parts << QTextDocumentFragment::fromHtml(c->text()).toPlainText().simplified();
    return parts.join(QStringLiteral(" | "));
}

void TrainingInspectorPanel::refreshBanner()
{
    QStringList lines;
    if (model_->hasNetwork()) {
        if (!model_->obstacle().isEmpty()) lines << QStringLiteral("<b>No training graph:</b> ") + model_->obstacle().toHtmlEscaped();
        for (const QString& w : model_->modelWarnings())
            if (model_->obstacle().isEmpty() || !w.contains(model_->obstacle()))   // said above
                lines << QStringLiteral("<b>TinyEngine:</b> ") + w.toHtmlEscaped();
        int rows = 0;
        for (int i = 0; i < model_->rowCount(); ++i) rows += !model_->warningsOf(i).isEmpty();
        if (rows) lines << QStringLiteral("<b>TinyEngine</b> cannot compile the choice on %1 row%2 (⚠ in the table; hover for why).")
                               .arg(rows)
                               .arg(rows == 1 ? QString() : QStringLiteral("s"));
        const QString problem = model_->expressibilityProblem();
        if (!problem.isEmpty()) lines << QStringLiteral("<b>Not a tiny-training config</b> (cannot be saved as one): ") + problem.toHtmlEscaped();
    }
    banner_->setText(lines.join(QStringLiteral("<br>")));
    banner_->setVisible(!lines.isEmpty());
}

QString TrainingInspectorPanel::bannerText() const { return banner_->isHidden() ? QString() : banner_->text(); }

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
