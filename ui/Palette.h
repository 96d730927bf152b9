#pragma once
// The app's colours: roles of the one palette (resources/palette.json, read by core/viz/Palette.h,
// which the DOT diagrams use too) as a QColor for painters and charts, or as "#rrggbb" for style
// sheets and rich text. An unknown role throws InputError (tests/test_palette checks every role used).
#include <QColor>
#include <QString>

#include <string_view>

namespace tinyscope::ui {

QColor paletteColor(std::string_view role);
QString paletteName(std::string_view role);
// `text` (plain, escaped here) in the role's colour, for a rich-text label: an error line.
QString colouredHtml(std::string_view role, const QString& text);

}  // namespace tinyscope::ui
