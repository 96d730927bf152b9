#include "CompressPanel.h"

#include "AppState.h"
#include "ChartStyle.h"
#include "CompressCharts.h"
#include "DeployDialog.h"
#include "JobProgressBar.h"
#include "JobRunner.h"
#include "TourActions.h"

#include "Error.h"
#include "compress/LinearQuantization.h"
#include "cost/CostModel.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/compress/PruningJob.h"
#include "nn/compress/WeightQuantizationJob.h"
#include "workspace/Workspace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QChartView>

#include <cmath>

namespace tinyscope::ui {

namespace {

QChartView* chartView(int minimumHeight)
{
    auto* v = new QChartView;
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumHeight(minimumHeight);
    v->setChart(styledChart());
    return v;
}

QSpinBox* countBox(int value, int max, int step)
{
    auto* s = new QSpinBox;
    s->setRange(0, max);
    s->setSingleStep(step);
    s->setValue(value);
    return s;
}

QString kib(std::int64_t bits) { return QString::fromStdString(formatFixed(static_cast<double>(bits) / 8192.0, 1)) + QStringLiteral(" KiB"); }
QString pct(double v) { return QString::fromStdString(formatFixed(v, 2)) + QStringLiteral(" %"); }

}  // namespace

CompressPanel::CompressPanel(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    jobs_ = new JobRunner(this);
    build();
    connect(state_, &AppState::subnetChanged, this, &CompressPanel::subnetChanged);
    connect(state_, &AppState::workspaceChanged, this, &CompressPanel::subnetChanged);
    connect(jobs_, &JobRunner::finished, this, [this] { setBusy(false); });
    subnetChanged();
}

CompressPanel::~CompressPanel() = default;

void CompressPanel::build()
{
    auto* top = new QHBoxLayout;
    subnet_ = new QLabel;
    subnet_->setWordWrap(true);
    images_ = countBox(500, 10000, 100);
    images_->setToolTip(QStringLiteral("Test images each measurement uses (0: all 10,000)"));
    calibImages_ = countBox(500, 10000, 100);
    calibImages_->setToolTip(QStringLiteral("Images the subnet's BatchNorm is re-calibrated on, once, dense (0: the checkpoint's statistics)"));
    progress_ = new JobProgressBar(jobs_);
    progress_->setMinimumWidth(200);
    progress_->setMaximumWidth(280);
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setToolTip(QStringLiteral("Stop the running job; nothing it was making is kept"));
    cancel_->setEnabled(false);
    connect(cancel_, &QPushButton::clicked, this, &CompressPanel::cancel);
    top->addWidget(subnet_, 1);
    top->addWidget(new QLabel(QStringLiteral("Test images")));
    top->addWidget(images_);
    top->addWidget(new QLabel(QStringLiteral("BN images")));
    top->addWidget(calibImages_);
    top->addWidget(progress_);
    top->addWidget(cancel_);
    pages_ = new QTabWidget;
    pages_->addTab(pruningPage(), QStringLiteral("Fine-grained pruning"));
    pages_->addTab(channelsPage(), QStringLiteral("Channel pruning"));
    pages_->addTab(quantizationPage(), QStringLiteral("n-bit weights"));
    auto* v = new QVBoxLayout(this);
    v->addLayout(top);
    v->addWidget(pages_, 1);
}

QWidget* CompressPanel::pruningPage()
{
    auto* page = new QWidget;
    curves_ = chartView(140);
    params_ = chartView(90);
    histogram_ = chartView(90);
    auto* charts = new QWidget;
    auto* chartsLayout = new QVBoxLayout(charts);
    chartsLayout->setContentsMargins(0, 0, 0, 0);
    chartsLayout->addWidget(curves_, 3);
    auto* below = new QHBoxLayout;
    below->addWidget(params_);
    below->addWidget(histogram_);
    chartsLayout->addLayout(below, 2);

    layers_ = new QTableWidget(0, 3);
    layers_->setHorizontalHeaderLabels({QStringLiteral("Layer"), QStringLiteral("Parameters"), QStringLiteral("Sparsity")});
    layers_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    layers_->verticalHeader()->hide();
    layers_->setSelectionMode(QAbstractItemView::NoSelection);
    uniform_ = new QDoubleSpinBox;
    uniform_->setRange(0, 1);
    uniform_->setSingleStep(0.1);
    uniform_->setDecimals(2);
    uniform_->setValue(0.5);
    uniform_->setToolTip(QStringLiteral("The sparsity \"Set all\" gives every layer"));
    auto* apply = new QPushButton(QStringLiteral("Set all"));
    apply->setToolTip(QStringLiteral("Every layer of the table at this sparsity"));
    connect(apply, &QPushButton::clicked, this, [this] { setUniformSparsity(uniform_->value()); });
    size_ = new QLabel;
    finetuneEpochs_ = countBox(0, 100, 1);
    finetuneEpochs_->setToolTip(QStringLiteral("Fine-tuning after pruning, the masks re-applied after every step (0: none)"));
    finetuneImages_ = countBox(5000, 55000, 1000);
    finetuneImages_->setToolTip(QStringLiteral("Training images per fine-tuning epoch (0: all 55,000 of fashion-mnist:fit)"));
    auto* scan = new QPushButton(QStringLiteral("Scan sensitivity"));
    scan->setToolTip(QStringLiteral("Each layer alone at sparsity 0.4 … 0.9, the others dense (the lab's scan)"));
    connect(scan, &QPushButton::clicked, this, &CompressPanel::scanSensitivity);
    auto* prune = new QPushButton(QStringLiteral("Prune and measure"));
    prune->setToolTip(QStringLiteral("Prune each layer at its sparsity (the lab's magnitude pruning), measure top-1, fine-tune if asked"));
    connect(prune, &QPushButton::clicked, this, &CompressPanel::pruneAndMeasure);
    pruneResult_ = new QLabel;
    pruneResult_->setWordWrap(true);
    pruneResult_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* uniformRow = new QHBoxLayout;
    uniformRow->addWidget(new QLabel(QStringLiteral("Every layer")));
    uniformRow->addWidget(uniform_);
    uniformRow->addWidget(apply);
    uniformRow->addStretch();
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Fine-tune epochs"), finetuneEpochs_);
    form->addRow(QStringLiteral("Images per epoch"), finetuneImages_);
    deployPruned_ = deployButton(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(scan);
    buttons->addWidget(prune);
    buttons->addWidget(deployPruned_);
    auto* right = new QVBoxLayout;
    right->addLayout(uniformRow);
    right->addWidget(layers_, 1);
    right->addWidget(size_);
    right->addLayout(form);
    right->addLayout(buttons);
    right->addWidget(pruneResult_);
    auto* rightBox = new QWidget;
    rightBox->setLayout(right);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(charts);
    split->addWidget(rightBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* v = new QVBoxLayout(page);
    v->addWidget(split);
    return page;
}

QPushButton* CompressPanel::deployButton(bool channels)
{
    auto* b = new QPushButton(QStringLiteral("Deploy…"));
    b->setEnabled(QFileInfo::exists(savedFolder(channels) + QStringLiteral("/subnet.pth")));   // an earlier session's
    b->setToolTip(QStringLiteral("Export the last %1 subnet (kept in %2) as int8 TFLite or ONNX, check it on TFLM / ONNX Runtime or the emulated M7")
                      .arg(channels ? QStringLiteral("channel-pruned") : QStringLiteral("pruned"), savedFolder(channels)));
    connect(b, &QPushButton::clicked, this, [this, channels] { deploySaved(channels); });
    return b;
}

void CompressPanel::addTourActions(TourActions& actions)
{
    actions.addAction("compress-settings", [this](const Json& g, TourRun&) {
        if (g.contains("images")) images_->setValue(g["images"].get<int>());
        if (g.contains("calib_images")) calibImages_->setValue(g["calib_images"].get<int>());
        if (g.contains("epochs")) setTraining(g["epochs"].get<int>(), finetuneImages_->value());
        if (g.contains("train_images")) setTraining(finetuneEpochs_->value(), g["train_images"].get<int>());
        return true;
    });
    actions.addAction("compress-page", [this](const Json& g, TourRun&) {
        const std::string page = g["page"].get<std::string>();
        showPage(page == "pruning" ? 0 : page == "channels" ? 1 : 2);
        return true;
    });
    // Runs on the panel's worker; the tour goes on when the job ends.
    actions.addAction("compress-run", [this](const Json& g, TourRun& run) {
        const std::string job = g["job"].get<std::string>();
        if (job == "prune" && (layers_->rowCount() == 0 || !(layersOf_ == state_->subnet())))
            throw InputError("the layer table is not the current subnet's: run the scan first");
        if (g.contains("uniform")) setUniformSparsity(g["uniform"].get<double>());
        if (g.contains("ratio")) ratio_->setValue(g["ratio"].get<double>());
        if (g.contains("bits")) bits_->setText(QString::fromStdString(g["bits"].get<std::string>()));
        const TourRun::Later later = run.later();
        auto failure = std::make_shared<QString>();
        auto connections = std::make_shared<std::vector<QMetaObject::Connection>>();
        auto drop = [connections] {
            for (const QMetaObject::Connection& c : *connections) QObject::disconnect(c);
        };
        connections->push_back(connect(jobs_, &JobRunner::failed, this, [failure](const QString& m) { *failure = m; }));
        connections->push_back(connect(jobs_, &JobRunner::finished, this, [drop, later, failure](bool ok) {
            drop();
            if (!later.current()) return;
            later.finish(ok, ok ? QString() : QStringLiteral("the job did not finish: ") + (failure->isEmpty() ? QStringLiteral("cancelled") : *failure));
        }));
        const bool started = job == "scan" ? scanSensitivity() : job == "prune" ? pruneAndMeasure() : job == "channels" ? pruneChannels() : quantize();
        if (!started) {
            drop();
            throw InputError("the Compress panel could not start the " + job + " job (no supernet, or a job running)");
        }
        run.status(QStringLiteral("running the %1 job …").arg(QString::fromStdString(job)));
        return false;
    });
    actions.addStop([this] { cancel(); });
    actions.addAction("compress-deploy", [this](const Json& g, TourRun& run) {
        const bool channels = g["kind"].get<std::string>() == "channel-pruned";
        QWidget* d = deploySaved(channels);
        if (!d) throw InputError("no Deploy dialog: " + (channels ? channelResult_ : pruneResult_)->text().toStdString());
        run.keepDialog(d);
        return true;
    });
    actions.addTarget("sensitivity-curves", [this] { return curves_; });
    actions.addTarget("parameter-bars", [this] { return params_; });
    actions.addTarget("sparsity-table", [this] { return layers_; });
    actions.addTarget("weight-histogram", [this] { return histogram_; });
    actions.addTarget("channel-speedup", [this] { return speedup_; });
    actions.addTarget("bit-width-accuracy", [this] { return accuracy_; });
    actions.addTarget("kmeans-view", [this] { return cluster_; });
}

QString CompressPanel::savedFolder(bool channels) const
{
    return QString::fromStdString(userStateDir()) + (channels ? QStringLiteral("/compress/channel-pruned") : QStringLiteral("/compress/pruned"));
}

DeployDialog* CompressPanel::deploySaved(bool channels)
{
    ModelSource saved;
    try {
        saved = ModelSource::subnetFolder(savedFolder(channels).toStdString());
    } catch (const std::exception& e) {   // said on the page (no modal box: the button is disabled until a run saved one)
        (channels ? channelResult_ : pruneResult_)->setText(QStringLiteral("Nothing to deploy: %1").arg(QString::fromUtf8(e.what())));
        return nullptr;
    }
    auto* d = new DeployDialog(saved, QString::fromStdString(saved.asSubnet()->space.name) + (channels ? QStringLiteral("-channel-pruned") : QStringLiteral("-pruned")),
                               this);
    d->setBoard(state_->boardName());
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

QWidget* CompressPanel::channelsPage()
{
    auto* page = new QWidget;
    ratio_ = new QDoubleSpinBox;
    ratio_->setRange(0, 0.95);
    ratio_->setSingleStep(0.05);
    ratio_->setValue(0.3);
    ratio_->setToolTip(QStringLiteral("Each channel group keeps round(channels × (1 − ratio)) channels"));
    sort_ = new QCheckBox(QStringLiteral("Keep the network sorted by importance first"));
    sort_->setChecked(true);
    sort_->setToolTip(QStringLiteral("Both orders are measured; this one is kept (fine-tuned). Sorting by importance changes nothing the network computes"));
    channelEpochs_ = countBox(0, 100, 1);
    channelEpochs_->setToolTip(QStringLiteral("Fine-tuning epochs after channel pruning (0: none); images per epoch as on the pruning page"));
    auto* run = new QPushButton(QStringLiteral("Prune channels"));
    run->setToolTip(QStringLiteral("Narrow every channel group, measure top-1 with and without sorting, and the speed-up"));
    connect(run, &QPushButton::clicked, this, &CompressPanel::pruneChannels);
    speedup_ = chartView(200);
    channelResult_ = new QLabel;
    channelResult_->setWordWrap(true);
    channelResult_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Pruned-out ratio"), ratio_);
    form->addRow(QString(), sort_);
    form->addRow(QStringLiteral("Fine-tune epochs"), channelEpochs_);
    deployNarrow_ = deployButton(true);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run);
    buttons->addWidget(deployNarrow_);
    buttons->addStretch();
    form->addRow(QString(), buttons);
    auto* left = new QVBoxLayout;
    left->addLayout(form);
    left->addWidget(channelResult_);
    left->addStretch();
    auto* h = new QHBoxLayout(page);
    h->addLayout(left, 2);
    h->addWidget(speedup_, 3);
    return page;
}

QWidget* CompressPanel::quantizationPage()
{
    auto* page = new QWidget;
    bits_ = new QLineEdit(QStringLiteral("8,4,2"));
    bits_->setToolTip(QStringLiteral("Bit widths 1–8, comma-separated"));
    linear_ = new QCheckBox(QStringLiteral("linear (per channel)"));
    kmeans_ = new QCheckBox(QStringLiteral("k-means"));
    linear_->setChecked(true);
    kmeans_->setChecked(true);
    linear_->setToolTip(QStringLiteral("Symmetric, a scale per output channel: at most 2^bits levels per channel"));
    kmeans_->setToolTip(QStringLiteral("2^bits centroids per tensor (k-means++ seeded, Lloyd's iterations)"));
    qatEpochs_ = countBox(0, 100, 1);
    qatEpochs_->setToolTip(QStringLiteral("Quantization-aware training after each quantization (k-means: the lab's update_codebook)"));
    qatImages_ = countBox(5000, 55000, 1000);
    qatImages_->setToolTip(QStringLiteral("Training images per QAT epoch (0: all 55,000)"));
    auto* run = new QPushButton(QStringLiteral("Quantize"));
    run->setToolTip(QStringLiteral("Quantize the weights at each width with each method, measure top-1 (and after QAT)"));
    connect(run, &QPushButton::clicked, this, &CompressPanel::quantize);
    run_ = new QComboBox;
    run_->setToolTip(QStringLiteral("The run whose k-means view and weight histogram are shown"));
    connect(run_, qOverload<int>(&QComboBox::currentIndexChanged), this, &CompressPanel::showCluster);
    quantResult_ = new QLabel;
    quantResult_->setWordWrap(true);
    quantResult_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    accuracy_ = chartView(120);
    cluster_ = chartView(110);
    quantHistogram_ = chartView(90);
    auto* methods = new QHBoxLayout;
    methods->addWidget(linear_);
    methods->addWidget(kmeans_);
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Bits"), bits_);
    form->addRow(QStringLiteral("Methods"), methods);
    form->addRow(QStringLiteral("QAT epochs"), qatEpochs_);
    form->addRow(QStringLiteral("QAT images per epoch"), qatImages_);
    form->addRow(QString(), run);
    form->addRow(QStringLiteral("Show"), run_);
    auto* left = new QVBoxLayout;
    left->addLayout(form);
    left->addWidget(quantResult_);
    left->addWidget(quantHistogram_, 1);
    auto* charts = new QWidget;
    auto* chartsLayout = new QVBoxLayout(charts);
    chartsLayout->setContentsMargins(0, 0, 0, 0);
    chartsLayout->addWidget(accuracy_, 1);
    chartsLayout->addWidget(cluster_, 1);
    auto* h = new QHBoxLayout(page);
    h->addLayout(left, 2);
    h->addWidget(charts, 3);
    return page;
}

bool CompressPanel::request(EvaluationRequest& rq)
{
    const Workspace& w = state_->workspace();
    if (!w.hasSupernet() || w.data.empty()) {
        QMessageBox::warning(this, QStringLiteral("Compress"),
                             QStringLiteral("Workspace %1: %2.").arg(QString::fromStdString(w.title), QString::fromStdString(w.evaluationBlocker())));
        return false;
    }
    rq.space = w.space;
    rq.config = state_->subnet();
    rq.supernet = w.supernet;
    rq.data = w.data;
    if (!w.calib_data.empty()) rq.calib_data = w.calib_data;
    rq.images = static_cast<std::size_t>(images_->value());
    rq.calibrate = calibImages_->value() > 0 && !w.calib_data.empty();
    rq.calibration.images = static_cast<std::size_t>(calibImages_->value());
    return true;
}

void CompressPanel::subnetChanged()
{
    const SubnetConfig& c = state_->subnet();
    const CostSummary cost = CostModel(state_->space()).summary(c);
    subnet_->setText(QStringLiteral("Subnet at %1×%1: %2 M MACs, %3 k parameters, %4 KiB at 32 bits — workspace %5")
                         .arg(c.image_size)
                         .arg(cost.millionMacs(), 0, 'f', 2)
                         .arg(static_cast<double>(cost.params) / 1000.0, 0, 'f', 1)
                         .arg(static_cast<double>(cost.params) * 4 / 1024.0, 0, 'f', 1)
                         .arg(state_->workspaceTitle()));
    if (!(c == layersOf_)) {
        layers_->setRowCount(0);
        layerParams_.clear();
        totalParams_ = cost.params;
        updateSize();
    }
}

std::function<void(const JobFailure&)> CompressPanel::failureShown(const QString& title)
{
    return [this, title](const JobFailure& f) {
        progress_->finish(f.cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed"));
        if (!f.cancelled) QMessageBox::warning(this, title, f.message);
    };
}

bool CompressPanel::start(const QString& text)
{
    if (jobs_->busy()) return false;
    progress_->restart(text);
    setBusy(true);
    return true;
}

void CompressPanel::setBusy(bool busy) { cancel_->setEnabled(busy); }

void CompressPanel::cancel() { jobs_->cancel(); }

bool CompressPanel::waitForIdle(int timeoutMs) { return jobs_->waitForIdle(timeoutMs); }

bool CompressPanel::loadLayers()
{
    EvaluationRequest rq;
    if (!request(rq) || !start(QStringLiteral("reading the layers"))) return false;
    const SubnetConfig asked = rq.config;
    return jobs_->run([rq](const JobControl&) { return prunableLayers(rq); },
                      [this, asked](std::vector<PrunedLayer> layers) {
                          progress_->finish(QStringLiteral("layers read"));
                          if (!(asked == state_->subnet())) return;
                          std::vector<std::string> names;
                          std::vector<std::int64_t> params;
                          for (const PrunedLayer& l : layers) names.push_back(l.name), params.push_back(l.params);
                          layersOf_ = asked;
                          showLayers(names, params);
                      },
                      failureShown(QStringLiteral("Compress")));
}

void CompressPanel::showLayers(const std::vector<std::string>& names, const std::vector<std::int64_t>& params)
{
    layers_->setRowCount(static_cast<int>(names.size()));
    layerParams_ = params;
    for (int r = 0; r < static_cast<int>(names.size()); ++r) {
        auto* name = new QTableWidgetItem(shortLayerName(names[static_cast<std::size_t>(r)]));
        name->setData(Qt::UserRole, QString::fromStdString(names[static_cast<std::size_t>(r)]));
        name->setToolTip(QString::fromStdString(names[static_cast<std::size_t>(r)]));
        name->setFlags(Qt::ItemIsEnabled);
        layers_->setItem(r, 0, name);
        auto* count = new QTableWidgetItem(QString::number(params[static_cast<std::size_t>(r)]));
        count->setFlags(Qt::ItemIsEnabled);
        count->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        layers_->setItem(r, 1, count);
        auto* s = new QDoubleSpinBox;
        s->setRange(0, 1);
        s->setSingleStep(0.05);
        s->setDecimals(2);
        s->setFrame(false);
        s->setToolTip(QStringLiteral("This layer's sparsity: the share of its weights with the smallest |w| set to zero"));
        connect(s, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &CompressPanel::updateSize);
        layers_->setCellWidget(r, 2, s);
    }
    replaceChart(params_, parameterBarsChart(names, params));
    updateSize();
}

void CompressPanel::setImageCounts(int images, int calibrationImages)
{
    images_->setValue(images);
    calibImages_->setValue(calibrationImages);
}

void CompressPanel::setTraining(int epochs, int images)
{
    for (QSpinBox* e : {finetuneEpochs_, channelEpochs_, qatEpochs_}) e->setValue(epochs);
    finetuneImages_->setValue(images);
    qatImages_->setValue(images);
}

int CompressPanel::layerCount() const { return layers_->rowCount(); }

void CompressPanel::setLayerSparsity(int row, double s)
{
    if (auto* box = qobject_cast<QDoubleSpinBox*>(layers_->cellWidget(row, 2))) box->setValue(s);
}

void CompressPanel::setUniformSparsity(double s)
{
    for (int r = 0; r < layers_->rowCount(); ++r) setLayerSparsity(r, s);
}

std::int64_t CompressPanel::denseBits() const { return totalParams_ * 32; }

std::int64_t CompressPanel::sparseBits() const
{
    // The lab's count: round(n × s) zeros per layer (ties at the threshold can add a few), every
    // other parameter kept.
    std::int64_t zeros = 0;
    for (int r = 0; r < layers_->rowCount() && r < static_cast<int>(layerParams_.size()); ++r) {
        const auto* box = qobject_cast<const QDoubleSpinBox*>(layers_->cellWidget(r, 2));
        const double s = box ? box->value() : 0;
        zeros += static_cast<std::int64_t>(std::nearbyint(static_cast<double>(layerParams_[static_cast<std::size_t>(r)]) * s));
    }
    return (totalParams_ - zeros) * 32;
}

void CompressPanel::updateSize()
{
    if (layers_->rowCount() == 0) {
        size_->setText(QStringLiteral("Dense: %1. Scan or prune to list the layers.").arg(kib(denseBits())));
        return;
    }
    const double share = denseBits() > 0 ? 100.0 * static_cast<double>(sparseBits()) / static_cast<double>(denseBits()) : 0;
    size_->setText(QStringLiteral("Sparse size ≈ %1 of %2 dense (%3 %)").arg(kib(sparseBits()), kib(denseBits())).arg(share, 0, 'f', 1));
}

bool CompressPanel::scanSensitivity()
{
    PruneRequest rq;
    if (!request(rq.evaluation) || !start(QStringLiteral("scanning"))) return false;
    rq.sensitivity = true;
    return jobs_->run([rq](const JobControl& job) { return runPruning(rq, job); },
                      [this, asked = rq.evaluation.config](PruneResult r) {
                          progress_->finish(r.scan_cancelled ? QStringLiteral("cancelled: %1 of %2 layers scanned").arg(r.sensitivity.size()).arg(r.scan_layers)
                                                             : QStringLiteral("scanned in %1 s").arg(r.seconds, 0, 'f', 1));
                          if (!(asked == state_->subnet())) return;
                          std::vector<std::string> names;
                          std::vector<std::int64_t> params;
                          for (const PrunedLayer& l : r.layers) names.push_back(l.name), params.push_back(l.params);
                          if (!(layersOf_ == asked)) {
                              layersOf_ = asked;
                              showLayers(names, params);
                          }
                          replaceChart(curves_, sensitivityChart(r.sensitivity, r.dense_top1));
                          lastResult_ = QStringLiteral("Dense top-1 %1 on %2 images; the scan took %3 s.").arg(pct(r.dense_top1)).arg(r.images).arg(r.seconds, 0, 'f', 1);
                          pruneResult_->setText(lastResult_);
                      },
                      failureShown(QStringLiteral("Sensitivity scan")));
}

bool CompressPanel::pruneAndMeasure()
{
    PruneRequest rq;
    if (!request(rq.evaluation)) return false;
    if (layers_->rowCount() == 0 || !(layersOf_ == state_->subnet())) return loadLayers();   // then set the sparsities
    for (int r = 0; r < layers_->rowCount(); ++r) {
        const auto* box = qobject_cast<const QDoubleSpinBox*>(layers_->cellWidget(r, 2));
        rq.sparsity[layers_->item(r, 0)->data(Qt::UserRole).toString().toStdString()] = box ? box->value() : 0;
    }
    rq.finetune.epochs = finetuneEpochs_->value();
    rq.finetune.images = static_cast<std::size_t>(finetuneImages_->value());
    rq.out = savedFolder(false).toStdString();   // for Deploy…
    if (!start(QStringLiteral("pruning"))) return false;
    return jobs_->run([rq](const JobControl& job) { return runPruning(rq, job); }, [this](PruneResult r) { showPruning(r); },
                      failureShown(QStringLiteral("Prune")));
}

void CompressPanel::showPruning(const PruneResult& r)
{
    progress_->finish(QStringLiteral("pruned in %1 s").arg(r.seconds, 0, 'f', 1));
    QString text = QStringLiteral("Top-1 on %1 images: dense %2, pruned %3").arg(r.images).arg(pct(r.dense_top1), r.pruned ? pct(r.pruned_top1) : QStringLiteral("—"));
    if (!r.finetune.empty())
        text += QStringLiteral(", after %1 fine-tuning epoch(s) %2").arg(r.finetune.size()).arg(pct(r.finetuned_top1));
    text += QStringLiteral(".\nNon-zeros: %1 of %2 dense (%3 %).")
                .arg(kib(r.sparse_bits), kib(r.dense_bits))
                .arg(100.0 * static_cast<double>(r.sparse_bits) / static_cast<double>(std::max<std::int64_t>(r.dense_bits, 1)), 0, 'f', 1);
    lastResult_ = text;
    pruneResult_->setText(text);
    deployPruned_->setEnabled(true);
    replaceChart(histogram_, histogramChart(QStringLiteral("Weights before and after pruning (non-zeros)"),
                                            {{QStringLiteral("dense"), r.weights_before}, {QStringLiteral("pruned, non-zeros"), r.weights_after}}));
}

bool CompressPanel::pruneChannels()
{
    PruneRequest rq;
    if (!request(rq.evaluation) || !start(QStringLiteral("pruning channels"))) return false;
    rq.channels = ratio_->value();
    rq.sort = sort_->isChecked();
    rq.finetune.epochs = channelEpochs_->value();
    rq.finetune.images = static_cast<std::size_t>(finetuneImages_->value());
    rq.out = savedFolder(true).toStdString();   // for Deploy…
    return jobs_->run([rq](const JobControl& job) { return runPruning(rq, job); }, [this](PruneResult r) { showChannels(r); },
                      failureShown(QStringLiteral("Channel pruning")));
}

void CompressPanel::showChannels(const PruneResult& r)
{
    progress_->finish(QStringLiteral("pruned in %1 s").arg(r.seconds, 0, 'f', 1));
    QString groups;
    for (const ChannelGroup& g : r.channel_groups) groups += QStringLiteral("%1 %2→%3, ").arg(QString::fromStdString(g.name)).arg(g.channels).arg(g.kept);
    groups.chop(2);
    QString text = QStringLiteral("Top-1 on %1 images: dense %2; pruned %3 without sorting, %4 after sorting")
                       .arg(r.images)
                       .arg(pct(r.dense_top1), pct(r.unsorted_top1), pct(r.sorted_top1));
    if (r.recalibrated_top1 >= 0) text += QStringLiteral("; with its BatchNorm re-calibrated %1").arg(pct(r.recalibrated_top1));
    if (!r.finetune.empty()) text += QStringLiteral("; after %1 fine-tuning epoch(s) %2").arg(r.finetune.size()).arg(pct(r.finetuned_top1));
    text += QStringLiteral(".\nLatency %1 → %2 ms per image (%3).\nChannels: %4.")
                .arg(r.original.latency.ms, 0, 'f', 3)
                .arg(r.narrowed.latency.ms, 0, 'f', 3)
                .arg(QString::fromStdString(r.narrowed.latency.engine), groups);
    lastResult_ = text;
    channelResult_->setText(text);
    deployNarrow_->setEnabled(true);
    replaceChart(speedup_, speedupChart(r));
}

bool CompressPanel::quantize()
{
    WeightQuantRequest rq;
    if (!request(rq.evaluation)) return false;
    try {
        rq.bits = parseBitWidths(bits_->text().toStdString());
    } catch (const InputError& e) {
        QMessageBox::warning(this, QStringLiteral("Quantize"), QString::fromUtf8(e.what()));
        return false;
    }
    rq.methods.clear();
    if (linear_->isChecked()) rq.methods.push_back(WeightQuantMethod::Linear);
    if (kmeans_->isChecked()) rq.methods.push_back(WeightQuantMethod::KMeans);
    if (rq.bits.empty() || rq.methods.empty()) {
        QMessageBox::warning(this, QStringLiteral("Quantize"), QStringLiteral("Choose at least one bit width and one method."));
        return false;
    }
    rq.qat.epochs = qatEpochs_->value();
    rq.qat.images = static_cast<std::size_t>(qatImages_->value());
    if (!start(QStringLiteral("quantizing"))) return false;
    return jobs_->run([rq](const JobControl& job) { return runWeightQuantization(rq, job); }, [this](WeightQuantResult r) { showQuantization(r); },
                      failureShown(QStringLiteral("Quantize")));
}

void CompressPanel::showQuantization(const WeightQuantResult& r)
{
    progress_->finish(QStringLiteral("quantized in %1 s").arg(r.seconds, 0, 'f', 1));
    quantized_ = std::make_shared<const WeightQuantResult>(r);
    QString text = QStringLiteral("Float32: top-1 %1, %2 (%3 parameters).\n").arg(pct(r.float_top1), kib(r.float_bits)).arg(r.params);
    run_->blockSignals(true);
    run_->clear();
    for (const WeightQuantRun& run : r.runs) {
        const QString name = QStringLiteral("%1 %2-bit").arg(QString::fromLatin1(methodName(run.method))).arg(run.bits);
        text += QStringLiteral("%1: top-1 %2%3, %4 (lab: parameters × %5)\n")
                    .arg(name, pct(run.top1), run.qat.empty() ? QString() : QStringLiteral(", after QAT %1").arg(pct(run.qat_top1)), kib(run.lab_size_bits))
                    .arg(run.bits);
        run_->addItem(name);
    }
    run_->blockSignals(false);
    lastResult_ = text.trimmed();
    quantResult_->setText(lastResult_);
    replaceChart(accuracy_, accuracySizeChart(r));
    // First the k-means run with the fewest bits: its clusters can be told apart.
    int shown = 0;
    for (int i = 0; i < static_cast<int>(r.runs.size()); ++i) {
        const WeightQuantRun& q = r.runs[static_cast<std::size_t>(i)];
        const WeightQuantRun& best = r.runs[static_cast<std::size_t>(shown)];
        if ((q.method == WeightQuantMethod::KMeans && best.method != WeightQuantMethod::KMeans) || (q.method == best.method && q.bits < best.bits)) shown = i;
    }
    run_->setCurrentIndex(shown);
    showCluster(shown);
}

void CompressPanel::showCluster(int run)
{
    if (!quantized_ || run < 0 || run >= static_cast<int>(quantized_->runs.size())) return;
    const WeightQuantRun& q = quantized_->runs[static_cast<std::size_t>(run)];
    replaceChart(cluster_, clusterChart(q));
    replaceChart(quantHistogram_, histogramChart(QStringLiteral("Quantized weights, %1 %2-bit").arg(QString::fromLatin1(methodName(q.method))).arg(q.bits),
                                                 {{QStringLiteral("values"), q.histogram}}));
}

void CompressPanel::showPage(int page) { pages_->setCurrentIndex(page); }

QString CompressPanel::resultText() const { return lastResult_; }

}  // namespace tinyscope::ui
