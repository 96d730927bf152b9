#include "FlowLayout.h"

#include <QWidget>

#include <algorithm>

namespace tinyscope::ui {

FlowLayout::FlowLayout(QWidget* parent, int hSpacing, int vSpacing) : QLayout(parent), hSpacing_(hSpacing), vSpacing_(vSpacing)
{
    setContentsMargins(0, 0, 0, 0);
}

FlowLayout::~FlowLayout()
{
    while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addItem(QLayoutItem* item) { items_.append(item); }

QLayoutItem* FlowLayout::takeAt(int index)
{
    return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr;
}

QSize FlowLayout::minimumSize() const
{
    QSize s;
    for (const QLayoutItem* item : items_) s = s.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return s + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const
{
    // One line when there is room for it.
    int w = 0, h = 0;
    for (const QLayoutItem* item : items_) {
        const QSize s = item->sizeHint();
        w += (w > 0 ? hSpacing_ : 0) + s.width();
        h = std::max(h, s.height());
    }
    const QMargins m = contentsMargins();
    return QSize(w + m.left() + m.right(), h + m.top() + m.bottom());
}

void FlowLayout::setGeometry(const QRect& rect)
{
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::arrange(const QRect& rect, bool apply) const
{
    const QRect r = rect.marginsRemoved(contentsMargins());
    int x = r.x(), y = r.y(), lineHeight = 0;
    for (QLayoutItem* item : items_) {
        if (item->isEmpty()) continue;
        const QSize s = item->sizeHint();
        if (x > r.x() && x + s.width() > r.right() + 1) {
            x = r.x();
            y += lineHeight + vSpacing_;
            lineHeight = 0;
        }
        if (apply) item->setGeometry(QRect(QPoint(x, y), QSize(std::min(s.width(), r.width()), s.height())));
        x += s.width() + hSpacing_;
        lineHeight = std::max(lineHeight, s.height());
    }
    const QMargins m = contentsMargins();
    return y + lineHeight - rect.y() + m.bottom();
}

QWidget* wrappingRow(const QList<QWidget*>& widgets, int hSpacing, int vSpacing)
{
    auto* box = new QWidget;
    auto* flow = new FlowLayout(box, hSpacing, vSpacing);
    for (QWidget* w : widgets) flow->addWidget(w);
    QSizePolicy p(QSizePolicy::Preferred, QSizePolicy::Preferred);
    p.setHeightForWidth(true);
    box->setSizePolicy(p);
    return box;
}

}  // namespace tinyscope::ui
