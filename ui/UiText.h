#pragma once
// The core's short text forms (io/Text.h) as the widgets show them, and the plain-text label the
// result views build their paragraphs from.
#include "io/Text.h"

#include <QLabel>
#include <QString>

#include <cstdint>

namespace tinyscope::ui {

// 12345678 -> "12,345,678"
inline QString thousandsText(std::int64_t v) { return QString::fromStdString(groupThousands(v)); }
// 255104 -> "249.1 KB"
inline QString kbText(std::int64_t bytes) { return QString::fromStdString(kilobytesText(bytes)); }

// A paragraph of plain text: wraps, selectable with the mouse.
inline QLabel* wrappedTextLabel()
{
    auto* l = new QLabel;
    l->setWordWrap(true);
    l->setTextFormat(Qt::PlainText);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

}  // namespace tinyscope::ui
