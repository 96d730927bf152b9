#include "Palette.h"

#include "viz/Palette.h"

namespace tinyscope::ui {

QColor paletteColor(std::string_view role) { return QColor(paletteName(role)); }

QString paletteName(std::string_view role) { return QString::fromStdString(paletteColour(role)); }

}  // namespace tinyscope::ui
