#include "SubnetControls.h"

#include "AppState.h"
#include "BoardPicker.h"
#include "WorkspacePicker.h"

#include "space/ArchSampler.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {
QPushButton* button(const QString& text, const QString& toolTip = QString())
{
    auto* b = new QPushButton(text);
    if (!toolTip.isEmpty()) b->setToolTip(toolTip);
    return b;
}
}  // namespace

SubnetControls::SubnetControls(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    auto* form = new QFormLayout;
    picker_ = new WorkspacePicker(state_);
    resolutionBox_ = new QComboBox;
    widthBox_ = new QComboBox;
    resolutionBox_->setToolTip(QStringLiteral("Input resolution in pixels: MACs and activation memory grow with its square"));
    widthBox_->setToolTip(QStringLiteral("Width setting: every layer's channels scaled by this multiplier (MACs and params grow with about its square)"));
    form->addRow(QStringLiteral("Workspace"), picker_);
    // The workspace's board: the one place it is chosen (issue 47); every SRAM budget follows it.
    boardPicker_ = new BoardPicker(false);
    boardPicker_->setObjectName(QStringLiteral("workspaceBoard"));
    boardPicker_->setToolTip(QStringLiteral("The board this workspace's subnets are meant for. Every SRAM budget starts from its SRAM "
                                            "(this panel's, the Training inspector's, the Search panel's fine-tuning budget) and "
                                            "Deploy / Export check against it; each workspace keeps its own board"));
    boardPicker_->follow(state_);
    form->addRow(QStringLiteral("Board"), boardPicker_);
    form->addRow(QStringLiteral("Resolution"), resolutionBox_);
    form->addRow(QStringLiteral("Width"), widthBox_);
    lay->addLayout(form);
    lay->addWidget(pickRow());
    lay->addWidget(depthGroup());
    blocks_ = blockTable();
    lay->addWidget(blocks_, 1);

    connect(resolutionBox_, qOverload<int>(&QComboBox::currentIndexChanged), this, &SubnetControls::onEdited);
    connect(widthBox_, qOverload<int>(&QComboBox::currentIndexChanged), this, &SubnetControls::onEdited);
    connect(state_, &AppState::spaceChanged, this, &SubnetControls::rebuildForSpace);
    connect(state_, &AppState::subnetChanged, this, &SubnetControls::showSubnet);
    rebuildForSpace();
    showSubnet();
}

QWidget* SubnetControls::pickRow()
{
    auto* row = new QWidget;
    auto* lay = new QVBoxLayout(row);
    lay->setContentsMargins(0, 0, 0, 0);
    auto* buttons = new QHBoxLayout;
    auto* minB = button(QStringLiteral("Min"), QStringLiteral("The smallest subnet: smallest kernel, expand and depth, narrowest width, lowest resolution"));
    auto* maxB = button(QStringLiteral("Max"),
                        QStringLiteral("The lab's max: largest kernel/expand/depth at the widest width the supernet's sampler draws"));
    auto* fullB = button(QStringLiteral("Max (full)"), QStringLiteral("Largest kernel/expand/depth at the full width"));
    auto* randB = button(QStringLiteral("Random"), QStringLiteral("A random subnet drawn as the supernet's sampler draws (the seed beside)"));
    for (QPushButton* b : {minB, maxB, fullB, randB}) buttons->addWidget(b);
    lay->addLayout(buttons);
    auto* seedRow = new QHBoxLayout;
    seedRow->addWidget(new QLabel(QStringLiteral("Random seed")));
    seedBox_ = new QSpinBox;
    seedBox_->setObjectName(QStringLiteral("randomSeed"));
    seedBox_->setToolTip(QStringLiteral("Seed of Random: the same seed draws the same subnet"));
    seedBox_->setRange(0, 1000000);
    seedBox_->setToolTip(QStringLiteral("Seed as Python's random.seed(s): seed 0 gives the lab's first draws"));
    seedRow->addWidget(seedBox_);
    lay->addLayout(seedRow);
    connect(minB, &QPushButton::clicked, this, &SubnetControls::selectMin);
    connect(maxB, &QPushButton::clicked, this, &SubnetControls::selectLabMax);
    connect(fullB, &QPushButton::clicked, this, &SubnetControls::selectFullMax);
    connect(randB, &QPushButton::clicked, this, &SubnetControls::selectRandom);
    connect(seedBox_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { randomDraws_ = 0; });
    return row;
}

QWidget* SubnetControls::depthGroup()
{
    auto* group = new QGroupBox(QStringLiteral("Extra depth per stage"));
    auto* dg = new QHBoxLayout(group);
    depthRow_ = new QWidget;
    new QHBoxLayout(depthRow_);
    depthRow_->layout()->setContentsMargins(0, 0, 0, 0);
    dg->addWidget(depthRow_);
    return group;
}

QTableWidget* SubnetControls::blockTable()
{
    auto* t = new QTableWidget;
    t->setObjectName(QStringLiteral("blockChoices"));
    t->setColumnCount(4);
    t->setHorizontalHeaderLabels({QStringLiteral("block"), QStringLiteral("stage"), QStringLiteral("kernel"), QStringLiteral("expand")});
    t->verticalHeader()->hide();
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    t->verticalHeader()->setDefaultSectionSize(24);
    return t;
}

QComboBox* SubnetControls::choiceBox(const std::vector<int>& values, const QString& format)
{
    auto* b = new QComboBox;
    for (int v : values) b->addItem(format.arg(v), v);
    connect(b, qOverload<int>(&QComboBox::currentIndexChanged), this, &SubnetControls::onEdited);
    return b;
}

void SubnetControls::rebuildForSpace()
{
    const DesignSpace& s = state_->space();
    syncing_ = true;
    resolutionBox_->clear();
    for (int r : s.resolutions) resolutionBox_->addItem(QString::number(r), r);
    widthBox_->clear();
    for (int w = 0; w < s.numWidths(); ++w)
        widthBox_->addItem(QStringLiteral("%1 (%2×)").arg(w).arg(s.width_mult_list[static_cast<std::size_t>(w)]), w);
    rebuildDepths();
    rebuildBlocks();
    syncing_ = false;
}

void SubnetControls::rebuildDepths()
{
    const DesignSpace& s = state_->space();
    for (QComboBox* b : depthBoxes_) delete b;
    depthBoxes_.clear();
    for (int st = 0; st < s.numStages(); ++st) {
        const StageSpec& spec = s.stages[static_cast<std::size_t>(st)];
        // A stage of fixed depth shows a dash, disabled, and keeps its base depth.
        QComboBox* b = choiceBox(spec.elastic_depth ? s.depth_list : std::vector<int>{}, QStringLiteral("%1"));
        b->setToolTip(spec.elastic_depth ? QStringLiteral("Extra blocks in this stage beyond its base depth: more MACs and params, about the same peak SRAM")
                                         : QStringLiteral("This stage has a fixed depth"));
        if (!spec.elastic_depth) {
            b->addItem(QStringLiteral("–"), spec.base_depth);
            b->setEnabled(false);
        }
        b->setToolTip(QStringLiteral("stage %1").arg(st + 1));
        depthRow_->layout()->addWidget(b);
        depthBoxes_.push_back(b);
    }
}

void SubnetControls::rebuildBlocks()
{
    const DesignSpace& s = state_->space();
    blocks_->clearContents();
    blocks_->setRowCount(s.maxBlocks());
    for (int b = 0; b < s.maxBlocks(); ++b) {
        const int number[2] = {b + 1, s.stageOfBlock(b) + 1};   // block, stage
        for (int col = 0; col < 2; ++col) {
            auto* item = new QTableWidgetItem(QString::number(number[col]));
            item->setFlags(Qt::ItemIsEnabled);
            blocks_->setItem(b, col, item);
        }
        QComboBox* kernel = choiceBox(s.ks_list, QStringLiteral("%1×%1"));
        kernel->setToolTip(QStringLiteral("Depthwise kernel size of this block: its depthwise MACs grow with k²"));
        blocks_->setCellWidget(b, 2, kernel);
        QComboBox* expand = choiceBox(s.expand_list, QStringLiteral("%1"));
        expand->setToolTip(QStringLiteral("Expand ratio: the block's hidden channels = input channels × this; MACs and the block's activation memory grow with it"));
        blocks_->setCellWidget(b, 3, expand);
    }
}

void SubnetControls::showSubnet()
{
    const DesignSpace& s = state_->space();
    const SubnetConfig& c = state_->subnet();
    syncing_ = true;
    resolutionBox_->setCurrentIndex(s.resolutionIndex(c.image_size));
    widthBox_->setCurrentIndex(c.wid);
    for (int st = 0; st < s.numStages(); ++st)
        if (s.stages[static_cast<std::size_t>(st)].elastic_depth)
            depthBoxes_[static_cast<std::size_t>(st)]->setCurrentIndex(s.depthIndex(c.d[static_cast<std::size_t>(st)]));
    for (int b = 0; b < s.maxBlocks(); ++b) {
        auto* k = static_cast<QComboBox*>(blocks_->cellWidget(b, 2));
        auto* e = static_cast<QComboBox*>(blocks_->cellWidget(b, 3));
        const bool active = c.blockActive(s, b);
        const int ki = s.kernelIndex(c.ks[static_cast<std::size_t>(b)]);
        const int ei = s.expandIndex(c.e[static_cast<std::size_t>(b)]);
        k->setCurrentIndex(ki < 0 ? 0 : ki);
        e->setCurrentIndex(ei < 0 ? 0 : ei);
        k->setEnabled(active);
        e->setEnabled(active);
        for (int col = 0; col < 2; ++col)
            blocks_->item(b, col)->setForeground(active ? palette().text() : palette().placeholderText());
    }
    syncing_ = false;
}

SubnetConfig SubnetControls::configFromControls() const
{
    const DesignSpace& s = state_->space();
    SubnetConfig c = state_->subnet();
    c.image_size = resolution();
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

void SubnetControls::onEdited()
{
    if (syncing_) return;
    state_->setSubnet(configFromControls());
}

int SubnetControls::resolution() const { return resolutionBox_->currentData().toInt(); }

void SubnetControls::selectMin() { state_->setSubnet(ArchSampler(state_->space()).minConfig(resolution())); }

void SubnetControls::selectLabMax() { state_->setSubnet(ArchSampler(state_->space()).labMaxConfig(resolution())); }

void SubnetControls::selectFullMax() { state_->setSubnet(ArchSampler(state_->space()).fullMaxConfig(resolution())); }

void SubnetControls::selectRandom()
{
    PyRandom rng(static_cast<std::uint64_t>(seedBox_->value()));
    ArchSampler sampler(state_->space());
    SubnetConfig c;
    for (unsigned long long i = 0; i <= randomDraws_; ++i) c = sampler.random(rng);
    ++randomDraws_;
    state_->setSubnet(c);
    Q_EMIT state_->message(QStringLiteral("random draw %1 of seed %2").arg(randomDraws_ - 1).arg(seedBox_->value()));
}

}  // namespace tinyscope::ui
