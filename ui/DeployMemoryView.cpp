#include "DeployMemoryView.h"

#include "CapacityBar.h"
#include "Palette.h"

#include "io/Text.h"
#include "UiText.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace tinyscope::ui {

namespace {

// "peak SRAM (int8 activations)" → "peak SRAM": the figure's name without its gloss (bar labels).
QString shortFigure(const std::string& figure)
{
    const auto cut = figure.find(" (");
    return QString::fromStdString(cut == std::string::npos ? figure : figure.substr(0, cut));
}

// Whether a total fits the board's SRAM (a part of a total: not checked).
QTableWidgetItem* fitsItem(const EngineMemoryRow& row, const BoardProfile& board)
{
    if (!(row.total && row.bytes)) {
        auto* item = new QTableWidgetItem(QStringLiteral("—"));
        item->setToolTip(row.bytes ? QStringLiteral("a part of the engine's total; the total's row is checked against the board")
                                   : QStringLiteral("no figure"));
        return item;
    }
    const bool ok = *row.bytes <= board.sram_bytes;
    auto* item = new QTableWidgetItem(ok ? QStringLiteral("fits (%1 free)").arg(kbText(board.sram_bytes - *row.bytes))
                                         : QStringLiteral("does not fit (%1 over)").arg(kbText(*row.bytes - board.sram_bytes)));
    item->setForeground(paletteColor(ok ? "status.fits" : "status.error"));
    return item;
}

}  // namespace

DeployMemoryView::DeployMemoryView(QWidget* parent) : QGroupBox(QStringLiteral("One memory figure, three engines"), parent)
{
    auto* layout = new QVBoxLayout(this);
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    layout->addWidget(caption_);
    bars_ = new QWidget;
    barsLayout_ = new QVBoxLayout(bars_);
    barsLayout_->setContentsMargins(0, 0, 0, 0);
    barsLayout_->setSpacing(2);
    layout->addWidget(bars_);
    flash_ = new CapacityBar(QStringLiteral("Weights flash"));
    flash_->setToolTip(QStringLiteral("int8 weights + int32 biases (the cost model's flash figure, what TinyEngine's generated "
                                      "code keeps) against the board's flash"));
    layout->addWidget(flash_);
    // Issue 47: the figure above is not the file's size; the file is what TFLM keeps in flash.
    fileFlash_ = new CapacityBar(QStringLiteral(".tflite file"));
    fileFlash_->setToolTip(QStringLiteral("The written .tflite file: the weights and biases plus per-channel scales and zero points "
                                          "(float32 and int64 each), the graph and tensor metadata. TFLM keeps the whole file in flash"));
    layout->addWidget(fileFlash_);
    table_ = new QTableWidget(0, 5);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->verticalHeader()->hide();
    table_->setWordWrap(true);
    table_->horizontalHeader()->setStretchLastSection(true);
    // The reasons wrap: each row as tall as its reason at the Why column's width.
    connect(table_->horizontalHeader(), &QHeaderView::sectionResized, table_, [this] { table_->resizeRowsToContents(); });
    table_->setMinimumHeight(150);
    layout->addWidget(table_, 1);
}

void DeployMemoryView::clear() { table_->setRowCount(0); }

const CapacityBar* DeployMemoryView::sramBar(const QString& engine) const
{
    for (const CapacityBar* b : bars_->findChildren<CapacityBar*>())
        if (b->property("engine").toString() == engine) return b;
    return nullptr;
}

void DeployMemoryView::showMemory(const DeployMemoryComparison& memory, const BoardProfile& board)
{
    const std::vector<EngineMemoryRow> rows = memory.rows();
    const QString boardName = QString::fromStdString(board.name);
    caption_->setText(QStringLiteral("The same int8 file on three engines, each engine's whole figure against %1's %2 SRAM (%3 B). "
                                     "Ours counts activations only; the reasons for each difference are in the table (hover a reason to read all of it).")
                          .arg(boardName, kbText(board.sram_bytes), thousandsText(board.sram_bytes)));
    showBars(rows, memory, board);
    fillTable(rows, board);
    setTitle(QStringLiteral("One memory figure, three engines — against %1").arg(boardName));
}

// One bar per engine total (or why the engine has none), then ours flash.
void DeployMemoryView::showBars(const std::vector<EngineMemoryRow>& rows, const DeployMemoryComparison& memory, const BoardProfile& board)
{
    while (QLayoutItem* item = barsLayout_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    const QString boardName = QString::fromStdString(board.name);
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(bold);
    int labelWidth = std::max(fm.horizontalAdvance(QStringLiteral("Weights flash")), fm.horizontalAdvance(QStringLiteral(".tflite file")));
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
            bar->setToolTip(QStringLiteral("%1\n%2 %3: %4").arg(bar->text(), engine, QString::fromStdString(row.figure), QString::fromStdString(row.why)));
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
    flash_->setBytes(memory.ours_flash_bytes, board.flash_bytes, boardName + QStringLiteral(" flash"));
    fileFlash_->setLabelWidth(labelWidth);
    fileFlash_->setBytes(memory.file_bytes, board.flash_bytes, boardName + QStringLiteral(" flash"));
    fileFlash_->setVisible(memory.file_bytes > 0);
}

// Every row compareDeployMemory gives, each total checked against the board.
void DeployMemoryView::fillTable(const std::vector<EngineMemoryRow>& rows, const BoardProfile& board)
{
    table_->clear();
    table_->setRowCount(static_cast<int>(rows.size()));
    table_->setHorizontalHeaderLabels({QStringLiteral("Engine"), QStringLiteral("Figure"), QStringLiteral("Bytes"),
                                       QStringLiteral("Fits %1").arg(QString::fromStdString(board.name)), QStringLiteral("Why")});
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
        auto* bytes = new QTableWidgetItem(row.bytes ? thousandsText(*row.bytes) : QStringLiteral("—"));
        bytes->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(r, 2, bytes);
        table_->setItem(r, 3, fitsItem(row, board));
        auto* why = new QTableWidgetItem(QString::fromStdString(row.why));
        why->setToolTip(QStringLiteral("<p>%1</p>").arg(QString::fromStdString(row.why).toHtmlEscaped()));   // rich text: the tooltip wraps
        table_->setItem(r, 4, why);
    }
    for (int c = 0; c < 4; ++c) table_->resizeColumnToContents(c);
    table_->resizeRowsToContents();
}

}  // namespace tinyscope::ui
