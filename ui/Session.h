#pragma once
// The workbench's last state, kept between runs (issue 47): the workspace (a shipped one by name,
// or a space file), its supernet when another was chosen, the board, the subnet, what measures
// accuracy ("Measured by") and the open panel. `tinyscope gui` restores it at start and saves it
// at exit; tests and the screenshot tool start from the defaults (they never call these).
#include <QString>

class QSettings;

namespace tinyscope::ui {

class MainWindow;

void saveSession(const MainWindow& window, QSettings& settings);
// Brings back what it can: each part that no longer applies (a space file gone, a board file
// moved, a subnet of another space) is skipped and named in the returned text ("" when all came back).
QString restoreSession(MainWindow& window, const QSettings& settings);

}  // namespace tinyscope::ui
