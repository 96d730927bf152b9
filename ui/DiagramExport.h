#pragma once
// Saving a drawn block diagram: a right-click menu on the view ("Save diagram as SVG / PNG /
// DOT…") and the file dialog behind it. The diagram is written from its DOT text
// (renderDotForFile: the format follows the file name's suffix), atomically.
#include <QString>

#include <functional>
#include <string>

class QWidget;

namespace tinyscope::ui {

class SvgGraphView;

// `dot` returns the DOT text of what the view shows (empty: nothing to save); `stem` the default
// file name without suffix.
void offerDiagramSave(SvgGraphView* view, std::function<std::string()> dot, std::function<QString()> stem);

// Asks for a file name (SVG, PNG or DOT; `suffix` preselects one) and writes the diagram; a failure
// is shown in a message box. Returns the path written, or an empty string.
QString saveDiagramDialog(QWidget* parent, const std::string& dot, const QString& stem, const QString& suffix = QStringLiteral("svg"));

}  // namespace tinyscope::ui
