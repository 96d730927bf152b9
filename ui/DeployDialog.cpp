#include "DeployDialog.h"

#include "JobRunner.h"

#include "Palette.h"
#include "CapacityBar.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "space/SpacePresets.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QScrollArea>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

#include <algorithm>

namespace tinyscope::ui {

namespace {

const QColor kRed(0xb0, 0x00, 0x20), kGreen(0x2e, 0x7d, 0x32);

QString bytesText(std::int64_t b) { return QString::fromStdString(groupThousands(b)); }

QString kb(std::int64_t b) { return QString::number(static_cast<double>(b) / 1024.0, 'f', 1) + QStringLiteral(" KB"); }

QString extensionOf(DeployFormat f) { return f == DeployFormat::TFLite ? QStringLiteral(".tflite") : QStringLiteral(".onnx"); }

QString spaceOf(const ModelSpec& m) { return QString::fromStdString(m.space.empty() ? std::string("mcunet-fmnist") : m.space); }

// One line for people: which subnet of which checkpoint, and its figures from the cost model.
QString describeModel(const ModelSpec& m)
{
    if (m.supernet.empty()) return QString::fromStdString(m.describe()).toHtmlEscaped();
    QString text = QStringLiteral("Subnet of <b>%1</b> (space %2)")
                       .arg(QFileInfo(QString::fromStdString(m.supernet)).fileName().toHtmlEscaped(), spaceOf(m).toHtmlEscaped());
    if (!m.subnet) return text + QStringLiteral(": config %1").arg(QString::fromStdString(m.config.empty() ? "max" : m.config).toHtmlEscaped());
    try {
        const DesignSpace space = loadSpace(spaceOf(m).toStdString());
        const SubnetConfig& c = *m.subnet;
        int blocks = 0;
        for (int s = 0; s < space.numStages(); ++s) blocks += c.activeDepth(space, s);
        const CostSummary cost = CostModel(space).summary(c);
        text += QStringLiteral(": %1 px").arg(c.image_size);
        if (c.wid >= 0 && static_cast<std::size_t>(c.wid) < space.width_mult_list.size())
            text += QStringLiteral(", width ×%1").arg(space.width_mult_list[static_cast<std::size_t>(c.wid)]);
        text += QStringLiteral(", %1 blocks — %2 M MACs, peak SRAM %3, flash %4 (cost model, int8)")
                    .arg(blocks)
                    .arg(cost.millionMacs(), 0, 'f', 2)
                    .arg(kb(cost.peak_activation_bytes), kb(cost.flash_bytes));
    } catch (const std::exception& e) {
        text += QStringLiteral(" — <i>%1</i>").arg(QString::fromUtf8(e.what()).toHtmlEscaped());
    }
    return text;
}

// The progress stages of deployModel and compareDeployMemory, said for people.
QString stageText(const std::string& stage)
{
    if (stage == "TensorFlow Lite Micro") return QStringLiteral("TFLM: the file in TensorFlow Lite Micro (tflm_run)");
    if (stage == "TinyEngine's TFLite code generator") return QStringLiteral("TinyEngine: its TFLite code generator on the file");
    if (stage == "done") return QStringLiteral("memory compared");
    return QString::fromStdString(stage);
}

// "peak SRAM (int8 activations)" → "peak SRAM": the figure's name without its gloss (bar labels).
QString shortFigure(const std::string& figure)
{
    const auto cut = figure.find(" (");
    return QString::fromStdString(cut == std::string::npos ? figure : figure.substr(0, cut));
}

}  // namespace

DeployDialog::DeployDialog(ModelSpec model, const QString& stem, QWidget* parent) : QDialog(parent), model_(std::move(model)), stem_(stem)
{
    setWindowTitle(QStringLiteral("Deploy"));
    if (stem_.isEmpty())
        stem_ = model_.supernet.empty() ? QString::fromStdString(model_.zoo) : spaceOf(model_) + QStringLiteral("-subnet");
    auto* layout = new QVBoxLayout(this);
    modelLine_ = new QLabel(describeModel(model_));
    modelLine_->setTextFormat(Qt::RichText);
    modelLine_->setWordWrap(true);
    modelLine_->setToolTip(QString::fromStdString(model_.describe()));
    layout->addWidget(modelLine_);

    auto* form = new QFormLayout;
    format_ = new QComboBox;
    format_->addItem(QStringLiteral("TFLite, int8 — TensorFlow Lite Micro, TinyEngine, ST Edge AI, Netron"), int(DeployFormat::TFLite));
    format_->addItem(QStringLiteral("ONNX, float32 — ONNX Runtime and everything else"), int(DeployFormat::Onnx));
    form->addRow(QStringLiteral("Format"), format_);
    data_ = new QComboBox;
    data_->setEditable(true);
    data_->addItems({QStringLiteral("fashion-mnist:holdout"), QStringLiteral("fashion-mnist:fit")});
    data_->setToolTip(QStringLiteral("The images BatchNorm is re-calibrated on and the int8 ranges are calibrated on (never the test "
                                     "split): fashion-mnist:holdout|fit, or a folder of class sub-folders / IDX files"));
    auto* dataBrowse = new QPushButton(QStringLiteral("…"));
    dataBrowse->setMaximumWidth(30);
    auto* dataRow = new QHBoxLayout;
    dataRow->addWidget(data_, 1);
    dataRow->addWidget(dataBrowse);
    form->addRow(QStringLiteral("Calibration data"), dataRow);
    connect(dataBrowse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, QStringLiteral("Calibration images (class sub-folders or IDX files)"));
        if (!d.isEmpty()) data_->setCurrentText(d);
    });
    calib_ = new QSpinBox;
    calib_->setRange(1, 100000);
    calib_->setValue(200);
    calib_->setToolTip(QStringLiteral("Images of the calibration data whose activations set the int8 scales and zero points "
                                      "(TFLite only; `tinyscope deploy --calib-images`, default 200)"));
    form->addRow(QStringLiteral("Calibration images"), calib_);
    bn_ = new QSpinBox;
    bn_->setRange(1, 100000);
    bn_->setValue(500);
    bn_->setToolTip(QStringLiteral("A subnet's BatchNorm statistics are re-computed on these calibration images before export. The CLI's "
                                   "default is 2,000 (--bn-images); 500 is the dialog's default because it takes a quarter of the time"));
    auto* bnRow = new QHBoxLayout;
    bnRow->addWidget(bn_);
    auto* bnNote = new QLabel(QStringLiteral("BatchNorm re-calibration; more is slower (the CLI uses 2,000)"));
    bnNote->setStyleSheet(QStringLiteral("color: %1").arg(paletteName("text.note")));
    bnRow->addWidget(bnNote, 1);
    form->addRow(QStringLiteral("BN images"), bnRow);
    bn_->setEnabled(!model_.supernet.empty());
    board_ = new QComboBox;
    for (const std::string& n : presetBoardNames()) {
        const BoardProfile b = presetBoard(n);
        board_->addItem(QStringLiteral("%1 — %2 KB SRAM, %3 KB flash, %4")
                            .arg(QString::fromStdString(b.name))
                            .arg(b.sram_bytes / 1024)
                            .arg(b.flash_bytes / 1024)
                            .arg(QString::fromStdString(b.core)),
                        QString::fromStdString(b.name));
    }
    board_->setCurrentIndex(std::max(0, board_->findData(QStringLiteral("stm32f746"))));
    board_->setToolTip(QStringLiteral("Each engine's memory figure is checked against this board's SRAM, ours flash against its flash (models/boards)"));
    form->addRow(QStringLiteral("Board"), board_);
    out_ = new QLineEdit(defaultOutput(DeployFormat::TFLite));
    browse_ = new QPushButton(QStringLiteral("Browse…"));
    auto* outRow = new QHBoxLayout;
    outRow->addWidget(out_, 1);
    outRow->addWidget(browse_);
    form->addRow(QStringLiteral("Output file"), outRow);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    deploy_ = new QPushButton(QStringLiteral("Deploy"));
    deploy_->setDefault(true);
    cancel_ = new QPushButton(QStringLiteral("Cancel"));
    cancel_->setEnabled(false);
    auto* close = new QPushButton(QStringLiteral("Close"));
    close->setAutoDefault(false);
    buttons->addWidget(deploy_);
    buttons->addWidget(cancel_);
    buttons->addStretch(1);
    buttons->addWidget(close);
    layout->addLayout(buttons);
    progress_ = new QProgressBar;
    progress_->setRange(0, 100);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    progress_->setFormat(QStringLiteral("ready"));
    layout->addWidget(progress_);
    status_ = new QLabel(QStringLiteral("Press Deploy to write the file; for TFLite the memory is then compared on three engines."));
    status_->setWordWrap(true);
    layout->addWidget(status_);
    summary_ = new QLabel;
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->hide();
    // The result (summary, bars, table) scrolls, so the dialog fits a 1280×720 screen.
    auto* results = new QWidget;
    auto* resultsLayout = new QVBoxLayout(results);
    resultsLayout->setContentsMargins(0, 0, 0, 0);
    resultsLayout->addWidget(summary_);

    memoryBox_ = new QGroupBox(QStringLiteral("One memory figure, three engines"));
    auto* ml = new QVBoxLayout(memoryBox_);
    memoryCaption_ = new QLabel;
    memoryCaption_->setWordWrap(true);
    ml->addWidget(memoryCaption_);
    bars_ = new QWidget;
    barsLayout_ = new QVBoxLayout(bars_);
    barsLayout_->setContentsMargins(0, 0, 0, 0);
    barsLayout_->setSpacing(2);
    ml->addWidget(bars_);
    flash_ = new CapacityBar(QStringLiteral("Tinyscope flash"));
    flash_->setToolTip(QStringLiteral("int8 weights + int32 biases (the cost model's flash figure) against the board's flash"));
    ml->addWidget(flash_);
    table_ = new QTableWidget(0, 5);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->verticalHeader()->hide();
    table_->setWordWrap(true);
    table_->horizontalHeader()->setStretchLastSection(true);
    connect(table_->horizontalHeader(), &QHeaderView::sectionResized, table_, [this] { fitTable(); });
    table_->setMinimumHeight(150);
    ml->addWidget(table_, 1);
    memoryBox_->hide();
    resultsLayout->addWidget(memoryBox_, 1);
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(results);
    layout->addWidget(scroll, 1);
    resize(1000, 820);   // the whole table of a TFLite deploy in view (its reasons wrap)

    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString filter = format() == DeployFormat::TFLite ? QStringLiteral("TFLite model (*.tflite)") : QStringLiteral("ONNX model (*.onnx)");
        const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Output file"), out_->text(), filter);
        if (!p.isEmpty()) out_->setText(p);
    });
    connect(format_, &QComboBox::currentIndexChanged, this, [this] {
        // The extension follows the format; any other name is the user's and is kept.
        QString p = out_->text();
        for (const QString& ext : {QStringLiteral(".tflite"), QStringLiteral(".onnx")})
            if (p.endsWith(ext)) p = p.left(p.size() - ext.size()) + extensionOf(format());
        out_->setText(p);
        calib_->setEnabled(!running_ && format() == DeployFormat::TFLite);
    });
    connect(board_, &QComboBox::currentIndexChanged, this, [this] {
        // The shown result against the newly chosen board: no need to deploy again.
        if (memory_) showMemory(presetBoard(boardName().toStdString()));
    });
    connect(deploy_, &QPushButton::clicked, this, &DeployDialog::deploy);
    connect(cancel_, &QPushButton::clicked, this, &DeployDialog::cancel);
    jobs_ = new JobRunner(this);
    connect(jobs_, &JobRunner::progress, this, [this](qint64 done, qint64 total, const QString& stage) {
        progress_->setValue(total ? static_cast<int>(100 * done / total) : 0);
        if (!jobs_->cancelRequested()) progress_->setFormat(stage);
    });
    connect(jobs_, &JobRunner::cancelled, this, [this] { endJob(false, QString()); });
    connect(jobs_, &JobRunner::failed, this, [this](const QString& e) { endJob(false, e); });
    connect(jobs_, &JobRunner::finished, this, [this](bool ok) {
        if (ok) endJob(true, QString());
    });
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
}

DeployDialog::~DeployDialog() = default;   // jobs_ cancels and waits

QString DeployDialog::defaultOutput(DeployFormat f) const
{
    return QDir::homePath() + QStringLiteral("/tinyscope-deploy/") + stem_ + extensionOf(f);
}

void DeployDialog::setFormat(DeployFormat f) { format_->setCurrentIndex(std::max(0, format_->findData(int(f)))); }

DeployFormat DeployDialog::format() const { return static_cast<DeployFormat>(format_->currentData().toInt()); }

void DeployDialog::setCalibrationImages(int n) { calib_->setValue(n); }

void DeployDialog::setCalibrationData(const QString& data) { data_->setCurrentText(data); }

QString DeployDialog::calibrationData() const { return data_->currentText().trimmed(); }

void DeployDialog::setBnImages(int n) { bn_->setValue(n); }

void DeployDialog::setBoard(const QString& name)
{
    const int i = board_->findData(name);
    if (i >= 0) board_->setCurrentIndex(i);
}

QString DeployDialog::boardName() const { return board_->currentData().toString(); }

void DeployDialog::setOutputFile(const QString& path) { out_->setText(path); }

QString DeployDialog::outputFile() const { return out_->text(); }

QString DeployDialog::statusText() const { return status_->text(); }

QString DeployDialog::progressText() const { return progress_->format(); }

QString DeployDialog::summaryText() const { return result_ ? QTextDocumentFragment::fromHtml(summary_->text()).toPlainText() : QString(); }

bool DeployDialog::memoryShown() const { return memory_.has_value() && !memoryBox_->isHidden(); }

const CapacityBar* DeployDialog::sramBar(const QString& engine) const
{
    for (const CapacityBar* b : bars_->findChildren<CapacityBar*>())
        if (b->property("engine").toString() == engine) return b;
    return nullptr;
}

void DeployDialog::cancel()
{
    if (!jobs_->busy()) return;
    jobs_->cancel();
    progress_->setFormat(QStringLiteral("cancelling…"));
}

void DeployDialog::setRunning(bool running)
{
    running_ = running;
    deploy_->setEnabled(!running);
    cancel_->setEnabled(running);
    format_->setEnabled(!running);
    calib_->setEnabled(!running && format() == DeployFormat::TFLite);
    data_->setEnabled(!running);
    bn_->setEnabled(!running && !model_.supernet.empty());
    out_->setEnabled(!running);
    browse_->setEnabled(!running);
}

void DeployDialog::clearResult()
{
    result_.reset();
    memory_.reset();
    summary_->clear();
    summary_->hide();
    memoryBox_->hide();
    table_->setRowCount(0);
}

void DeployDialog::deploy()
{
    if (jobs_->busy()) return;
    DeployRequest rq;
    rq.model = model_;
    rq.format = format();
    rq.int8 = rq.format == DeployFormat::TFLite;
    QString out = out_->text().trimmed();
    if (out.startsWith(QStringLiteral("~/"))) out = QDir::homePath() + out.mid(1);
    rq.out = out.toStdString();
    rq.quantize.calib_images = static_cast<std::size_t>(calib_->value());
    rq.quantize.calib_data = calibrationData().toStdString();
    rq.quantize.bn_images = static_cast<std::size_t>(bn_->value());
    clearResult();
    progress_->setValue(0);
    // Where the file goes is checked before any work (a folder that does not exist yet below a
    // writable one, as the default ~/tinyscope-deploy, is created).
    try {
        if (rq.out.empty()) throw InputError("Output file: give a file name");
        const std::string folder = parentFolderOf(rq.out);
        if (!QFileInfo::exists(QString::fromStdString(folder))) {
            requireWritableFolder(folder, "Output file's folder");
            QDir().mkpath(QString::fromStdString(folder));
        }
        requireWritableFile(rq.out, "Output file");
        // The permission bits do not tell everything (root in /proc, a read-only mount): a real
        // file in the folder does; removed at once.
        QTemporaryFile probe(QString::fromStdString(folder) + QStringLiteral("/.tinyscope-deploy-XXXXXX"));
        if (!probe.open())
            throw InputError("Output file " + rq.out + ": cannot create a file in " + folder + ": " + probe.errorString().toStdString());
    } catch (const std::exception& e) {
        progress_->setFormat(QStringLiteral("not written"));
        status_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName("status.error"), QString::fromUtf8(e.what()).toHtmlEscaped()));
        Q_EMIT deployed(false);
        return;
    }

    setRunning(true);
    clock_.start();
    progress_->setFormat(QStringLiteral("starting"));
    status_->setText(QStringLiteral("Deploying to %1…").arg(QString::fromStdString(rq.out).toHtmlEscaped()));
    struct Outcome {
        DeployResult result;
        std::optional<DeployMemoryComparison> memory;
        QString memoryError;
        bool memoryCancelled = false;
    };
    jobs_->run(
        [rq](const JobControl& job) {
            // Percent of the bar with the stage's words: deployModel's stages take the first 70 %
            // (all of it for ONNX), the memory comparison the rest.
            const bool tflite = rq.format == DeployFormat::TFLite;
            auto comparing = std::make_shared<bool>(false);
            JobControl inner = job;
            inner.progress = [job, comparing, tflite](std::size_t done, std::size_t total, const std::string& stage) {
                double f = total ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
                QString text = stageText(stage);
                if (stage == "calibrating BN") {   // BN re-calibration sits inside prepareModel's second third
                    f = (1.0 + f) / 3.0;
                    text += QStringLiteral(" %1/%2").arg(done).arg(total);
                }
                const int value = *comparing ? 70 + static_cast<int>(30 * f) : static_cast<int>((tflite ? 70 : 100) * f);
                job.report(static_cast<std::size_t>(value), 100, text.toStdString());
            };
            Outcome o;
            o.result = deployModel(rq, inner);
            if (!tflite) return o;
            // The written file on the engines that run it: the file is already there, so a cancel
            // or an error here keeps it and says so.
            *comparing = true;
            try {
                o.memory = compareDeployMemory(o.result, inner);
            } catch (const CancelledError&) {
                o.memoryCancelled = true;
            } catch (const std::exception& e) {
                o.memoryError = QString::fromUtf8(e.what());
            }
            return o;
        },
        [this](Outcome o) {
            result_ = std::move(o.result);
            memory_ = std::move(o.memory);
            progress_->setValue(100);
            progress_->setFormat(QStringLiteral("written"));
            QString status = QStringLiteral("Deployed in %1 s%2.")
                                 .arg(static_cast<double>(clock_.elapsed()) / 1000.0, 0, 'f', 1)
                                 .arg(memory_ ? QStringLiteral(", the memory compared on three engines") : QString());
            if (o.memoryCancelled) status += QStringLiteral(" The memory comparison was cancelled.");
            else if (!o.memoryError.isEmpty())
                status += QStringLiteral(" <span style='color:%1'>The memory comparison failed: %2</span>")
                              .arg(paletteName("status.error"), o.memoryError.toHtmlEscaped());
            status_->setText(status);
            showResult();
        });
}

void DeployDialog::endJob(bool ok, const QString& error)
{
    setRunning(false);
    if (!ok) {
        progress_->setFormat(error.isEmpty() ? QStringLiteral("cancelled") : QStringLiteral("failed"));
        const QString text = error.isEmpty() ? QStringLiteral("Cancelled: nothing was written.") : error;
        status_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName("status.error"), text.toHtmlEscaped()));
    }
    Q_EMIT deployed(ok);
}

void DeployDialog::showResult()
{
    const DeployResult& r = *result_;
    auto tensor = [](const DeployTensor& t) {
        QStringList dims;
        for (const auto d : t.shape) dims << QString::number(d);
        QString s = QStringLiteral("<tt>%1</tt> [%2] %3").arg(QString::fromStdString(t.name).toHtmlEscaped(), dims.join(QLatin1Char(',')),
                                                               QString::fromStdString(t.type));
        if (t.scale && t.zero_point) s += QStringLiteral(", scale %1, zero point %2").arg(*t.scale, 0, 'g', 6).arg(*t.zero_point);
        else s += QStringLiteral(" (float: no scale, zero point)");
        return s;
    };
    QStringList ops;
    for (const auto& [op, n] : r.ops) ops << QStringLiteral("%1 %2").arg(QString::fromStdString(op)).arg(n);
    QString text = QStringLiteral("<b>%1</b> — %2 B, %3<br><b>Ops</b> %4<br><b>Input</b> %5<br><b>Output</b> %6<br>"
                                 "<b>Cost model</b> %7 MACs, peak SRAM %8 B, flash %9 B (int8)")
                       .arg(QString::fromStdString(r.out).toHtmlEscaped(), bytesText(static_cast<std::int64_t>(r.bytes)),
                            r.format == DeployFormat::TFLite ? QStringLiteral("TFLite, int8") : QStringLiteral("ONNX, float32"),
                            ops.join(QStringLiteral(", ")), tensor(r.input), tensor(r.output), bytesText(r.cost.macs),
                            bytesText(r.cost.peak_sram_bytes), bytesText(r.cost.flash_bytes));
    if (r.format != DeployFormat::TFLite)
        text += QStringLiteral("<br><i>The three-engine memory table is for the int8 TFLite file (the engines that run a "
                               "microcontroller model): choose TFLite and deploy again to see it.</i>");
    summary_->setText(text);
    summary_->show();
    if (memory_) showMemory(presetBoard(boardName().toStdString()));
}

void DeployDialog::showMemory(const BoardProfile& board)
{
    const DeployMemoryComparison& m = *memory_;
    const std::vector<EngineMemoryRow> rows = m.rows();
    const QString boardName = QString::fromStdString(board.name);
    memoryCaption_->setText(QStringLiteral("The same int8 file on three engines, each engine's whole figure against %1's %2 SRAM (%3 B). "
                                           "Ours counts activations only; the reasons for each difference are in the table (hover a reason to read all of it).")
                                .arg(boardName, kb(board.sram_bytes), bytesText(board.sram_bytes)));

    // The bars: one per engine total (or why the engine has none), then ours flash.
    while (QLayoutItem* item = barsLayout_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(bold);
    int labelWidth = fm.horizontalAdvance(QStringLiteral("Tinyscope flash"));
    for (const EngineMemoryRow& row : rows)
        if (row.total) labelWidth = std::max(labelWidth, fm.horizontalAdvance(QString::fromStdString(row.engine) + QLatin1Char(' ') + shortFigure(row.figure)));
    labelWidth += 14;
    QStringList withBar;
    for (const EngineMemoryRow& row : rows) {
        const QString engine = QString::fromStdString(row.engine);
        if (row.total && row.bytes) {
            auto* bar = new CapacityBar(engine + QLatin1Char(' ') + shortFigure(row.figure));
            bar->setLabelWidth(labelWidth);
            bar->setProperty("engine", engine);
            bar->setBytes(*row.bytes, board.sram_bytes, boardName + QStringLiteral(" SRAM"));
            bar->setToolTip(QStringLiteral("%1 %2: %3").arg(engine, QString::fromStdString(row.figure), QString::fromStdString(row.why)));
            barsLayout_->addWidget(bar);
            withBar << engine;
        }
    }
    for (const EngineMemoryRow& row : rows) {
        const QString engine = QString::fromStdString(row.engine);
        if (row.bytes || withBar.contains(engine)) continue;
        auto* why = new QLabel(QStringLiteral("<b>%1</b>: no figure — %2").arg(engine, QString::fromStdString(row.why).toHtmlEscaped()));
        why->setWordWrap(true);
        why->setStyleSheet(QStringLiteral("color: %1").arg(paletteName("status.warn-dark")));
        why->setToolTip(QString::fromStdString(row.why));
        barsLayout_->addWidget(why);
        withBar << engine;
    }
    flash_->setLabelWidth(labelWidth);
    flash_->setBytes(m.ours_flash_bytes, board.flash_bytes, boardName + QStringLiteral(" flash"));

    // The table: every row compareDeployMemory gives, each total checked against the board.
    table_->clear();
    table_->setRowCount(static_cast<int>(rows.size()));
    table_->setHorizontalHeaderLabels({QStringLiteral("Engine"), QStringLiteral("Figure"), QStringLiteral("Bytes"),
                                       QStringLiteral("Fits %1").arg(boardName), QStringLiteral("Why")});
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const EngineMemoryRow& row = rows[i];
        const int r = static_cast<int>(i);
        auto* engine = new QTableWidgetItem(QString::fromStdString(row.engine));
        if (row.total) {
            QFont f = engine->font();
            f.setBold(true);
            engine->setFont(f);
        }
        table_->setItem(r, 0, engine);
        table_->setItem(r, 1, new QTableWidgetItem(QString::fromStdString(row.figure)));
        auto* bytes = new QTableWidgetItem(row.bytes ? bytesText(*row.bytes) : QStringLiteral("—"));
        bytes->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(r, 2, bytes);
        QTableWidgetItem* fits;
        if (row.total && row.bytes) {
            const bool ok = *row.bytes <= board.sram_bytes;
            fits = new QTableWidgetItem(ok ? QStringLiteral("fits (%1 free)").arg(kb(board.sram_bytes - *row.bytes))
                                           : QStringLiteral("does not fit (%1 over)").arg(kb(*row.bytes - board.sram_bytes)));
            fits->setForeground(ok ? kGreen : kRed);
        } else {
            fits = new QTableWidgetItem(QStringLiteral("—"));
            fits->setToolTip(row.bytes ? QStringLiteral("a part of the engine's total; the total's row is checked against the board")
                                       : QStringLiteral("no figure"));
        }
        table_->setItem(r, 3, fits);
        auto* why = new QTableWidgetItem(QString::fromStdString(row.why));
        why->setToolTip(QStringLiteral("<p>%1</p>").arg(QString::fromStdString(row.why).toHtmlEscaped()));   // rich text: the tooltip wraps
        table_->setItem(r, 4, why);
    }
    for (int c = 0; c < 4; ++c) table_->resizeColumnToContents(c);
    fitTable();
    memoryBox_->setTitle(QStringLiteral("One memory figure, three engines — against %1").arg(boardName));
    memoryBox_->show();
}

void DeployDialog::fitTable()
{
    // The reasons wrap: each row as tall as its reason at the Why column's width.
    table_->resizeRowsToContents();
}

bool DeployDialog::waitForIdle(int timeoutMs) { return jobs_->waitForIdle(timeoutMs); }

}  // namespace tinyscope::ui
