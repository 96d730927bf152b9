#include "DesignSpacePanel.h"

#include "ScreenFit.h"

#include "AppState.h"
#include "CostTableModel.h"
#include "DiagramExport.h"
#include "EvaluationBox.h"
#include "PeakMemoryChart.h"
#include "SvgGraphView.h"

#include "io/Text.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/Workspace.h"
#include "viz/ArchDiagram.h"
#include "viz/GraphvizRenderer.h"

#include <QCheckBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tinyscope::ui {

DesignSpacePanel::DesignSpacePanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    // ---- left: controls
    auto* controls = new QWidget;
    side_ = new QVBoxLayout(controls);
    auto* form = new QFormLayout;
    spaceBox_ = new QComboBox;
    // The shipped workspaces (space + supernet + predictor + data), then any space file.
    for (const std::string& n : shippedWorkspaceNames()) {
        const Workspace w = shippedWorkspace(n);
        spaceBox_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(w.title), QString::fromStdString(w.space.name)),
                           QString::fromStdString(n));
    }
    spaceBox_->addItem(QStringLiteral("Open space JSON…"));
    spaceBox_->setToolTip(QStringLiteral("A workspace is a design space with the supernet, predictor and data made for it"));
    resolutionBox_ = new QComboBox;
    widthBox_ = new QComboBox;
    form->addRow(QStringLiteral("Workspace"), spaceBox_);
    form->addRow(QStringLiteral("Resolution"), resolutionBox_);
    form->addRow(QStringLiteral("Width"), widthBox_);
    side_->addLayout(form);

    auto* buttons = new QHBoxLayout;
    auto* minB = new QPushButton(QStringLiteral("Min"));
    auto* maxB = new QPushButton(QStringLiteral("Max"));
    maxB->setToolTip(QStringLiteral("The lab's max: largest kernel/expand/depth at the widest width the supernet's sampler draws"));
    auto* fullB = new QPushButton(QStringLiteral("Max (full)"));
    fullB->setToolTip(QStringLiteral("Largest kernel/expand/depth at the full width"));
    auto* randB = new QPushButton(QStringLiteral("Random"));
    buttons->addWidget(minB);
    buttons->addWidget(maxB);
    buttons->addWidget(fullB);
    buttons->addWidget(randB);
    side_->addLayout(buttons);
    auto* seedRow = new QHBoxLayout;
    seedRow->addWidget(new QLabel(QStringLiteral("Random seed")));
    seedBox_ = new QSpinBox;
    seedBox_->setRange(0, 1000000);
    seedBox_->setToolTip(QStringLiteral("Seed as Python's random.seed(s): seed 0 gives the lab's first draws"));
    seedRow->addWidget(seedBox_);
    side_->addLayout(seedRow);

    auto* depthGroup = new QGroupBox(QStringLiteral("Extra depth per stage"));
    auto* dg = new QHBoxLayout(depthGroup);
    depthRow_ = new QWidget;
    new QHBoxLayout(depthRow_);
    depthRow_->layout()->setContentsMargins(0, 0, 0, 0);
    dg->addWidget(depthRow_);
    side_->addWidget(depthGroup);

    blocks_ = new QTableWidget;
    blocks_->setColumnCount(4);
    blocks_->setHorizontalHeaderLabels({QStringLiteral("block"), QStringLiteral("stage"), QStringLiteral("kernel"),
                                        QStringLiteral("expand")});
    blocks_->verticalHeader()->hide();
    blocks_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    blocks_->verticalHeader()->setDefaultSectionSize(24);
    side_->addWidget(blocks_, 1);
    evaluation_ = new EvaluationBox(state_);
    side_->addWidget(evaluation_);
    setAcceptDrops(true);
    controls->setMinimumWidth(300);
    controls->setMaximumWidth(380);

    // ---- centre: diagram
    diagram_ = new SvgGraphView;
    diagram_->setMinimumWidth(380);
    diagram_->setToolTip(QStringLiteral("Wheel zooms, drag pans, double-click fits; right-click saves the diagram"));
    offerDiagramSave(diagram_, [this] { return diagramDot_; }, [this] { return diagramStem(); });

    // ---- right: totals, chart, table
    auto* right = new QWidget;
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    totals_ = new QLabel;
    totals_->setTextFormat(Qt::RichText);
    totals_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* budgetRow = new QHBoxLayout;
    budgetRow->addWidget(totals_, 1);
    auto* bf = new QFormLayout;
    budget_ = new QDoubleSpinBox;
    budget_->setRange(1, 100000);
    budget_->setDecimals(0);
    budget_->setSuffix(QStringLiteral(" KB"));
    budget_->setValue(256);
    bf->addRow(QStringLiteral("SRAM budget"), budget_);
    budgetRow->addLayout(bf);
    rl->addLayout(budgetRow);
    auto* vsplit = new QSplitter(Qt::Vertical);
    chart_ = new PeakMemoryChart;
    // The peak-memory chart and, after an evaluation, the top-1 per class.
    auto* charts = new QTabWidget;
    charts->addTab(chart_, QStringLiteral("Peak memory"));
    charts->addTab(evaluation_->perClassView(), QStringLiteral("Accuracy per class"));
    charts->setTabEnabled(1, false);
    connect(evaluation_, &EvaluationBox::perClassShown, charts, [charts] {
        charts->setTabEnabled(1, true);
        charts->setCurrentIndex(1);
    });
    vsplit->addWidget(charts);
    auto* tableBox = new QWidget;
    auto* tl = new QVBoxLayout(tableBox);
    tl->setContentsMargins(0, 0, 0, 0);
    convOnly_ = new QCheckBox(QStringLiteral("convolutions and classifier only"));
    convOnly_->setChecked(true);
    tl->addWidget(convOnly_);
    tableModel_ = new CostTableModel(this);
    table_ = new QTableView;
    table_->setModel(tableModel_);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(20);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    boundNameColumn(table_, CostTableModel::Name, 170);   // shapes and MACs in view on a 1280×720 screen
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tl->addWidget(table_);
    vsplit->addWidget(tableBox);
    vsplit->setStretchFactor(0, 2);
    vsplit->setStretchFactor(1, 3);
    rl->addWidget(vsplit, 1);

    auto* split = new QSplitter(Qt::Horizontal);
    auto* scroll = new QScrollArea;
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(320);
    split->addWidget(scroll);
    split->addWidget(diagram_);
    split->addWidget(right);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 3);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(split);

    connect(minB, &QPushButton::clicked, this, &DesignSpacePanel::selectMin);
    connect(maxB, &QPushButton::clicked, this, &DesignSpacePanel::selectLabMax);
    connect(fullB, &QPushButton::clicked, this, &DesignSpacePanel::selectFullMax);
    connect(randB, &QPushButton::clicked, this, &DesignSpacePanel::selectRandom);
    connect(seedBox_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { randomDraws_ = 0; });
    connect(resolutionBox_, qOverload<int>(&QComboBox::currentIndexChanged), this, &DesignSpacePanel::onControlsEdited);
    connect(widthBox_, qOverload<int>(&QComboBox::currentIndexChanged), this, &DesignSpacePanel::onControlsEdited);
    connect(budget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { chart_->setReport(report_, budgetKB()); });
    connect(convOnly_, &QCheckBox::toggled, this, [this] { tableModel_->setReport(report_, convOnly_->isChecked()); });
    connect(spaceBox_, qOverload<int>(&QComboBox::activated), this, [this](int index) {
        try {
            if (index == spaceBox_->count() - 1) {
                QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open design space"), QString(),
                                                            QStringLiteral("Design space (*.json)"));
                if (path.isEmpty()) {
                    syncControls();
                    return;
                }
                state_->setSpace(DesignSpace::loadFile(path.toStdString()), path);
            } else {
                state_->setWorkspace(shippedWorkspace(spaceBox_->itemData(index).toString().toStdString()));
            }
        } catch (const std::exception& e) {
            QMessageBox::warning(this, QStringLiteral("Design space"), QString::fromUtf8(e.what()));
            syncControls();
        }
    });
    connect(state_, &AppState::spaceChanged, this, &DesignSpacePanel::rebuildForSpace);
    connect(state_, &AppState::subnetChanged, this, [this] {
        syncControls();
        refresh();
    });
    rebuildForSpace();
    syncControls();
    refresh();
}

double DesignSpacePanel::budgetKB() const { return budget_->value(); }

void DesignSpacePanel::dragEnterEvent(QDragEnterEvent* e)
{
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void DesignSpacePanel::dropEvent(QDropEvent* e)
{
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) evaluation_->classify(urls.front().toLocalFile());
}

void DesignSpacePanel::rebuildForSpace()
{
    const DesignSpace& s = state_->space();
    syncing_ = true;
    {
        // The picker follows a space set elsewhere (e.g. a search run re-opened in its own space).
        const QSignalBlocker quiet(spaceBox_);
        syncPicker();
    }
    resolutionBox_->clear();
    for (int r : s.resolutions) resolutionBox_->addItem(QString::number(r), r);
    widthBox_->clear();
    for (int w = 0; w < s.numWidths(); ++w)
        widthBox_->addItem(QStringLiteral("%1 (%2×)").arg(w).arg(s.width_mult_list[static_cast<std::size_t>(w)]), w);
    for (QComboBox* b : depthBoxes_) delete b;
    depthBoxes_.clear();
    for (int st = 0; st < s.numStages(); ++st) {
        auto* b = new QComboBox;
        b->setToolTip(QStringLiteral("stage %1").arg(st + 1));
        const StageSpec& spec = s.stages[static_cast<std::size_t>(st)];
        if (spec.elastic_depth) {
            for (int d : s.depth_list) b->addItem(QString::number(d), d);
        } else {
            b->addItem(QStringLiteral("–"), spec.base_depth);
            b->setEnabled(false);
        }
        connect(b, qOverload<int>(&QComboBox::currentIndexChanged), this, &DesignSpacePanel::onControlsEdited);
        depthRow_->layout()->addWidget(b);
        depthBoxes_.push_back(b);
    }
    blocks_->clearContents();
    blocks_->setRowCount(s.maxBlocks());
    for (int b = 0; b < s.maxBlocks(); ++b) {
        auto* id = new QTableWidgetItem(QString::number(b + 1));
        id->setFlags(Qt::ItemIsEnabled);
        blocks_->setItem(b, 0, id);
        auto* st = new QTableWidgetItem(QString::number(s.stageOfBlock(b) + 1));
        st->setFlags(Qt::ItemIsEnabled);
        blocks_->setItem(b, 1, st);
        auto* k = new QComboBox;
        for (int v : s.ks_list) k->addItem(QStringLiteral("%1×%1").arg(v), v);
        auto* e = new QComboBox;
        for (int v : s.expand_list) e->addItem(QString::number(v), v);
        connect(k, qOverload<int>(&QComboBox::currentIndexChanged), this, &DesignSpacePanel::onControlsEdited);
        connect(e, qOverload<int>(&QComboBox::currentIndexChanged), this, &DesignSpacePanel::onControlsEdited);
        blocks_->setCellWidget(b, 2, k);
        blocks_->setCellWidget(b, 3, e);
    }
    syncPicker();
    syncing_ = false;
}

void DesignSpacePanel::syncPicker()
{
    const int i = spaceBox_->findData(QString::fromStdString(state_->workspace().name));
    if (i >= 0) spaceBox_->setCurrentIndex(i);
}

void DesignSpacePanel::syncControls()
{
    const DesignSpace& s = state_->space();
    const SubnetConfig& c = state_->subnet();
    syncing_ = true;
    resolutionBox_->setCurrentIndex(s.resolutionIndex(c.image_size));
    widthBox_->setCurrentIndex(c.wid);
    for (int st = 0; st < s.numStages(); ++st) {
        QComboBox* b = depthBoxes_[static_cast<std::size_t>(st)];
        if (s.stages[static_cast<std::size_t>(st)].elastic_depth)
            b->setCurrentIndex(s.depthIndex(c.d[static_cast<std::size_t>(st)]));
    }
    for (int b = 0; b < s.maxBlocks(); ++b) {
        auto* k = static_cast<QComboBox*>(blocks_->cellWidget(b, 2));
        auto* e = static_cast<QComboBox*>(blocks_->cellWidget(b, 3));
        const bool active = c.blockActive(s, b);
        int ki = s.kernelIndex(c.ks[static_cast<std::size_t>(b)]);
        int ei = s.expandIndex(c.e[static_cast<std::size_t>(b)]);
        k->setCurrentIndex(ki < 0 ? 0 : ki);
        e->setCurrentIndex(ei < 0 ? 0 : ei);
        k->setEnabled(active);
        e->setEnabled(active);
        for (int col = 0; col < 2; ++col)
            blocks_->item(b, col)->setForeground(active ? palette().text() : palette().placeholderText());
    }
    syncPicker();
    syncing_ = false;
}

SubnetConfig DesignSpacePanel::configFromControls() const
{
    const DesignSpace& s = state_->space();
    SubnetConfig c = state_->subnet();
    c.image_size = resolutionBox_->currentData().toInt();
    c.wid = widthBox_->currentData().toInt();
    for (int st = 0; st < s.numStages(); ++st)
        if (s.stages[static_cast<std::size_t>(st)].elastic_depth)
            c.d[static_cast<std::size_t>(st)] = depthBoxes_[static_cast<std::size_t>(st)]->currentData().toInt();
    for (int b = 0; b < s.maxBlocks(); ++b) {
        c.ks[static_cast<std::size_t>(b)] = static_cast<QComboBox*>(blocks_->cellWidget(b, 2))->currentData().toInt();
        c.e[static_cast<std::size_t>(b)] = static_cast<QComboBox*>(blocks_->cellWidget(b, 3))->currentData().toInt();
    }
    return c;
}

void DesignSpacePanel::onControlsEdited()
{
    if (syncing_) return;
    state_->setSubnet(configFromControls());
}

void DesignSpacePanel::selectMin()
{
    state_->setSubnet(ArchSampler(state_->space()).minConfig(resolutionBox_->currentData().toInt()));
}

void DesignSpacePanel::selectLabMax()
{
    state_->setSubnet(ArchSampler(state_->space()).labMaxConfig(resolutionBox_->currentData().toInt()));
}

void DesignSpacePanel::selectFullMax()
{
    state_->setSubnet(ArchSampler(state_->space()).fullMaxConfig(resolutionBox_->currentData().toInt()));
}

void DesignSpacePanel::selectRandom()
{
    // Draw number n of seed s: the same sequence as Python's random.seed(s) followed by n draws.
    PyRandom rng(static_cast<std::uint64_t>(seedBox_->value()));
    ArchSampler sampler(state_->space());
    SubnetConfig c;
    for (unsigned long long i = 0; i <= randomDraws_; ++i) c = sampler.random(rng);
    ++randomDraws_;
    state_->setSubnet(c);
    Q_EMIT state_->message(QStringLiteral("random draw %1 of seed %2").arg(randomDraws_ - 1).arg(seedBox_->value()));
}

QString DesignSpacePanel::diagramStem() const
{
    const SubnetConfig& c = state_->subnet();
    return QStringLiteral("%1-%2px-w%3").arg(QString::fromStdString(state_->space().name)).arg(c.image_size).arg(c.wid);
}

void DesignSpacePanel::refresh()
{
    const DesignSpace& s = state_->space();
    const SubnetConfig& c = state_->subnet();
    CostModel model(s);
    report_ = model.report(c);
    const CostSummary& sum = report_.summary;
    totals_->setText(
        QStringLiteral("<table cellspacing=2>"
                       "<tr><td><b>MACs</b></td><td align=right>%1 M</td><td>&nbsp;(%2 without BN)</td></tr>"
                       "<tr><td><b>Peak SRAM</b></td><td align=right>%3 KB</td><td>&nbsp;at %4</td></tr>"
                       "<tr><td><b>Params</b></td><td align=right>%5</td><td></td></tr>"
                       "<tr><td><b>Flash</b></td><td align=right>%6 KB</td><td>&nbsp;int8 weights + int32 biases</td></tr>"
                       "</table>")
            .arg(sum.millionMacs(), 0, 'f', 3)
            .arg(QString::number(sum.macs_without_bn / 1e6, 'f', 3))
            .arg(sum.peakKB(), 0, 'f', 1)
            .arg(QString::fromStdString(report_.peak_layer))
            .arg(QString::fromStdString(groupThousands(sum.params)))
            .arg(sum.flashKB(), 0, 'f', 1));
    try {
        diagramDot_ = archDiagramDot(s, c, costedDiagramOptions(report_));
        diagram_->setSvg(QByteArray::fromStdString(renderDotToSvg(diagramDot_)));
    } catch (const std::exception& e) {
        diagramDot_.clear();
        Q_EMIT state_->message(QString::fromUtf8(e.what()));
    }
    tableModel_->setReport(report_, convOnly_->isChecked());
    int pr = tableModel_->peakRow();
    if (pr >= 0) table_->scrollTo(tableModel_->index(pr, 0), QAbstractItemView::PositionAtCenter);
    chart_->setReport(report_, budgetKB());
}

}  // namespace tinyscope::ui
