#include "ScreenFit.h"

#include <QApplication>
#include <QEvent>
#include <QScreen>
#include <QHeaderView>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>

#include <algorithm>
#include <functional>

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
    if (!opensMaximized(available, preferred)) return preferred;
    return available.size();
}

bool opensMaximized(const QRect& available, QSize preferred)
{
    return available.isValid() && (available.width() < preferred.width() || available.height() < preferred.height());
}

void fitDialogToScreen(QWidget* dialog, QSize preferred, QSize frame)
{
    const QScreen* screen = dialog->screen() ? dialog->screen() : QGuiApplication::primaryScreen();
    if (!screen) {
        dialog->resize(preferred);
        return;
    }
    const QSize room = (screen->availableGeometry().size() - frame).expandedTo(QSize(200, 200));
    dialog->setMaximumSize(room);
    dialog->resize(preferred.boundedTo(room));
}

namespace {

// Re-fits a side column whenever its controls' layout changes (a larger font in presentation mode,
// a wider control): issue 47 found columns cut at the side after the font grew.
class SideColumnFit : public QObject {
public:
    explicit SideColumnFit(QScrollArea* scroll) : QObject(scroll), scroll_(scroll), min_(scroll->minimumWidth())
    {
        apply();
        scroll->widget()->installEventFilter(this);
    }

    void apply() const
    {
        QWidget* w = scroll_->widget();
        const int frame = 2 * scroll_->frameWidth();
        const int needed = w->minimumSizeHint().width() + scroll_->verticalScrollBar()->sizeHint().width() + frame;
        scroll_->setMinimumWidth(std::max(min_, needed));
        if (scroll_->maximumWidth() < needed) scroll_->setMaximumWidth(needed);
    }

protected:
    bool eventFilter(QObject*, QEvent* e) override
    {
        if (e->type() == QEvent::LayoutRequest || e->type() == QEvent::FontChange) apply();
        return false;
    }

private:
    QScrollArea* scroll_;
    int min_;
};

}  // namespace

QScrollArea* verticalScrollArea(QWidget* content)
{
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    return scroll;
}

void fitSideColumn(QScrollArea* scroll)
{
    if (!scroll->widget()) return;
    new SideColumnFit(scroll);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
}

namespace {
// Calls `fit` after the watched widget's font changed (presentation mode).
class OnFontChange : public QObject {
public:
    OnFontChange(QObject* parent, std::function<void()> fit) : QObject(parent), fit_(std::move(fit)) {}
    bool eventFilter(QObject*, QEvent* e) override
    {
        if (e->type() == QEvent::FontChange) fit_();
        return false;
    }

private:
    std::function<void()> fit_;
};
}  // namespace

void boundNameColumn(QTableView* table, int column, int maxWidth)
{
    table->setItemDelegateForColumn(column, new MiddleElideDelegate(table));
    table->horizontalHeader()->setSectionResizeMode(column, QHeaderView::Interactive);
    // The bound grows with the font (presentation mode), so about as many characters show in
    // either mode: `maxWidth` is for the font the table has now.
    const int baseCharWidth = std::max(1, table->fontMetrics().averageCharWidth());
    auto fit = [table, column, maxWidth, baseCharWidth] {
        table->resizeColumnToContents(column);
        const int bound = maxWidth * std::max(baseCharWidth, table->fontMetrics().averageCharWidth()) / baseCharWidth;
        if (table->columnWidth(column) > bound) table->setColumnWidth(column, bound);
    };
    QAbstractItemModel* model = table->model();
    QObject::connect(model, &QAbstractItemModel::modelReset, table, fit);
    QObject::connect(model, &QAbstractItemModel::rowsInserted, table, fit);
    QObject::connect(model, &QAbstractItemModel::layoutChanged, table, fit);
    table->installEventFilter(new OnFontChange(table, fit));
    fit();
}

}  // namespace tinyscope::ui
