#include "RunHistoryView.h"

#include "FlowLayout.h"

#include "io/AtomicFile.h"
#include "io/Text.h"

#include <QDateTime>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tinyscope::ui {

RunHistoryView::RunHistoryView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    table_ = new QTableWidget;
    table_->setColumnCount(10);
    table_->setHorizontalHeaderLabels({QStringLiteral("when"), QStringLiteral("algorithm"), QStringLiteral("limits"),
                                       QStringLiteral("seed"), QStringLiteral("P × G"), QStringLiteral("top-1 %"),
                                       QStringLiteral("MACs (M)"), QStringLiteral("SRAM (KB)"), QStringLiteral("params"),
                                       QStringLiteral("ms")});
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(20);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* reopenB = new QPushButton(QStringLiteral("Re-open"));
    auto* deleteB = new QPushButton(QStringLiteral("Delete"));
    auto* exportB = new QPushButton(QStringLiteral("Export…"));
    reopenB->setToolTip(QStringLiteral("Show the selected run again (its result, limits and options)"));
    deleteB->setToolTip(QStringLiteral("Remove the selected run from the history"));
    exportB->setToolTip(QStringLiteral("Write the history as JSON or CSV"));
    exportB->setToolTip(QStringLiteral("All runs as JSON, or one row per run as CSV"));
    layout->addWidget(wrappingRow({new QLabel(QStringLiteral("<b>Runs</b> (kept between sessions)")), reopenB, deleteB, exportB}));
    layout->addWidget(table_, 1);

    connect(reopenB, &QPushButton::clicked, this, [this] { Q_EMIT reopenRequested(table_->currentRow()); });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { Q_EMIT reopenRequested(row); });
    connect(deleteB, &QPushButton::clicked, this, [this] {
        const int row = table_->currentRow();
        if (row < 0 || !history_) return;
        history_->remove(static_cast<std::size_t>(row));
        refresh();
    });
    connect(exportB, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Export runs"), QStringLiteral("search-runs.csv"),
                                                       QStringLiteral("CSV (*.csv);;JSON (*.json)"));
        if (!p.isEmpty()) Q_EMIT exportRequested(p);
    });
}

RunHistoryView::~RunHistoryView() = default;

QString RunHistoryView::setPath(const QString& path)
{
    history_ = std::make_unique<SearchHistory>(path.toStdString());
    refresh();
    return QString::fromStdString(history_->loadWarning());
}

void RunHistoryView::add(SearchRunRecord r)
{
    history_->add(std::move(r));
    refresh();
    table_->selectRow(0);
}

int RunHistoryView::rows() const { return table_->rowCount(); }

void RunHistoryView::exportTo(const QString& path) const
{
    if (path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive)) writeFileAtomic(path.toStdString(), history_->toCsv());
    else writeJsonFile(path.toStdString(), history_->toJson(), 1);
}

void RunHistoryView::refresh()
{
    const auto& runs = history_->runs();
    table_->setRowCount(static_cast<int>(runs.size()));
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const SearchRunRecord& r = runs[i];
        const SearchRunSummary s = r.summary();
        const int row = static_cast<int>(i);
        auto set = [&](int col, const QString& text) { table_->setItem(row, col, new QTableWidgetItem(text)); };
        set(0, QDateTime::fromString(QString::fromStdString(r.when), Qt::ISODate).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        set(1, QString::fromStdString(s.algorithm));
        set(2, QString::fromStdString(s.limits));
        set(3, QString::number(s.seed));
        set(4, QStringLiteral("%1 × %2").arg(s.population).arg(s.generations));
        if (s.best) {
            set(5, QString::number(s.best->accuracy, 'f', 3));
            set(6, QString::number(static_cast<double>(s.best->macs) / 1e6, 'f', 2));
            set(7, QString::number(static_cast<double>(s.best->peak_activation_bytes) / 1024, 'f', 1));
            set(8, QString::fromStdString(groupThousands(s.best->params)));
        }
        set(9, QString::number(s.seconds * 1e3, 'f', 1));
    }
}

}  // namespace tinyscope::ui
