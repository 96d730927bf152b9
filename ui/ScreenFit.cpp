#include "ScreenFit.h"

#include <QApplication>
#include <QHeaderView>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>

#include <algorithm>

namespace tinyscope::ui {

namespace {

// Elides the text in the middle to the cell's width (item views' own Qt::ElideMiddle cut dotted
// module paths to "blocks.…." in Qt 6.4).
class MiddleElideDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        const QStyle* style = option->widget ? option->widget->style() : QApplication::style();
        const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, option->widget) + 1;
        const int width = option->rect.width() - 2 * margin;
        if (width > 0 && option->fontMetrics.horizontalAdvance(option->text) > width)
            option->text = option->fontMetrics.elidedText(option->text, Qt::ElideMiddle, width);
    }
};

}  // namespace

QSize initialWindowSize(const QRect& available, QSize preferred)
{
    if (!available.isValid()) return preferred;
    return QSize(std::min(preferred.width(), available.width() * 9 / 10),
                 std::min(preferred.height(), available.height() * 9 / 10));
}

void fitSideColumn(QScrollArea* scroll)
{
    QWidget* w = scroll->widget();
    if (!w) return;
    const int frame = 2 * scroll->frameWidth();
    const int needed = w->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + frame;
    scroll->setMinimumWidth(std::max(scroll->minimumWidth(), needed));
    if (scroll->maximumWidth() < needed) scroll->setMaximumWidth(needed);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
}

void boundNameColumn(QTableView* table, int column, int maxWidth)
{
    table->setItemDelegateForColumn(column, new MiddleElideDelegate(table));
    table->horizontalHeader()->setSectionResizeMode(column, QHeaderView::Interactive);
    auto fit = [table, column, maxWidth] {
        table->resizeColumnToContents(column);
        if (table->columnWidth(column) > maxWidth) table->setColumnWidth(column, maxWidth);
    };
    QAbstractItemModel* model = table->model();
    QObject::connect(model, &QAbstractItemModel::modelReset, table, fit);
    QObject::connect(model, &QAbstractItemModel::rowsInserted, table, fit);
    QObject::connect(model, &QAbstractItemModel::layoutChanged, table, fit);
    fit();
}

}  // namespace tinyscope::ui
