#include "Palette.h"

#include "viz/Palette.h"

namespace tinyscope::ui {

QColor paletteColor(std::string_view role) { return QColor(paletteName(role)); }

QString paletteName(std::string_view role) { return QString::fromStdString(paletteColour(role)); }

QString colouredHtml(std::string_view role, const QString& text)
{
    return QStringLiteral("<span style='color:%1'>%2</span>").arg(paletteName(role), text.toHtmlEscaped());
}

}  // namespace tinyscope::ui
