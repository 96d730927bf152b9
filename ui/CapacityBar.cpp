#include "CapacityBar.h"

#include "Palette.h"
#include "io/Text.h"
#include "UiText.h"

#include <QPainter>

#include <algorithm>

namespace tinyscope::ui {

namespace {

constexpr int kBarHeight = 18;

}  // namespace

CapacityBar::CapacityBar(const QString& label, QWidget* parent) : QWidget(parent), label_(label)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void CapacityBar::setBytes(std::int64_t used, std::int64_t capacity, const QString& capacityName)
{
    used_ = used;
    capacity_ = capacity;
    capacityName_ = capacityName;
    setToolTip(text());
    update();
}

void CapacityBar::clear()
{
    used_ = -1;
    capacity_ = 0;
    capacityName_.clear();
    setToolTip(QString());
    update();
}

void CapacityBar::setLabelWidth(int px)
{
    labelWidth_ = std::max(0, px);
    update();
}

QString CapacityBar::text() const
{
    if (used_ < 0) return QString();
    const QString usedText = QStringLiteral("%1 (%2 B)").arg(kbText(used_), QString::fromStdString(groupThousands(used_)));
    if (capacity_ <= 0) return usedText;
    QString t = QStringLiteral("%1 of %2 (%3)").arg(usedText, kbText(capacity_), capacityName_);
    if (over()) t += QStringLiteral(": %1 over").arg(kbText(used_ - capacity_));
    return t;
}

QSize CapacityBar::sizeHint() const { return {520, kBarHeight + fontMetrics().height() + 8}; }

QSize CapacityBar::minimumSizeHint() const { return {300, kBarHeight + fontMetrics().height() + 8}; }

void CapacityBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QFontMetrics fm = fontMetrics();
    const int textTop = 0, barTop = fm.height() + 4;
    const QRect bar(labelWidth_, barTop, std::max(10, width() - labelWidth_ - 2), kBarHeight);
    // The label, vertically centred on the bar; the figures above the bar (they never overlap it).
    p.setPen(palette().color(QPalette::WindowText));
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRect(0, barTop, labelWidth_ - 6, kBarHeight), Qt::AlignLeft | Qt::AlignVCenter, label_);
    p.setFont(font());
    const QColor red = paletteColor("status.error"), fill = paletteColor("status.fits");
    p.setPen(over() ? red : palette().color(QPalette::WindowText));
    p.drawText(QRect(labelWidth_, textTop, bar.width(), fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(text(), Qt::ElideRight, bar.width()));
    p.setPen(QPen(paletteColor("capacity.frame"), 1));
    p.setBrush(paletteColor("capacity.empty"));
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    if (used_ < 0) return;
    // Without a capacity the bar is full (the figure is all there is); over it, the capacity is a
    // marker inside the bar at capacity / used, the part beyond it red.
    const std::int64_t scale = std::max(capacity_ > 0 ? capacity_ : used_, used_);
    const int inner = bar.width() - 2;
    const auto at = [&](std::int64_t bytes) { return scale > 0 ? static_cast<int>(static_cast<double>(inner) * static_cast<double>(bytes) / static_cast<double>(scale)) : 0; };
    const QRect usedRect(bar.left() + 1, bar.top() + 1, at(used_), bar.height() - 2);
    p.setPen(Qt::NoPen);
    if (capacity_ > 0 && !over()) {
        p.fillRect(usedRect, fill);
    } else if (capacity_ <= 0) {
        p.fillRect(usedRect, paletteColor("capacity.unbounded"));
    } else {
        const int cap = at(capacity_);
        p.fillRect(QRect(usedRect.left(), usedRect.top(), cap, usedRect.height()), fill);
        p.fillRect(QRect(usedRect.left() + cap, usedRect.top(), usedRect.width() - cap, usedRect.height()), red);
        p.setPen(QPen(Qt::black, 2));
        p.drawLine(usedRect.left() + cap, bar.top() - 2, usedRect.left() + cap, bar.bottom() + 2);
    }
}

}  // namespace tinyscope::ui
