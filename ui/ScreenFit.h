#pragma once
// Fitting the workbench to small screens (issue 19: 1280×720, and 1920×1080 at 150 % scaling).
#include <QRect>
#include <QSize>

class QScrollArea;
class QTableView;

namespace tinyscope::ui {

// The main window's first size: `preferred` (1,600×1,000) where it fits, else the screen's whole
// available geometry (issue 47: at 90 % of a 1280×720 screen the Evaluate row was cut off), so it
// never opens larger than the screen and never smaller than the screen needs.
QSize initialWindowSize(const QRect& available, QSize preferred = QSize(1600, 1000));
// Whether the main window opens maximised: the screen's available geometry is smaller than
// `preferred` in either direction (a 1280×720 or 1366×768 screen; runGui shows it so).
bool opensMaximized(const QRect& available, QSize preferred = QSize(1600, 1000));

// A dialog that fits the screen it opens on (issue 47: Deploy opened at 1000×820 on a 720 px
// screen): `preferred` capped to the available geometry (less `frame` for the window manager's
// title bar), and never taller or wider than it when its contents grow (its maximum size). The
// dialog's own layout keeps its buttons outside its scroll area, so they stay in view.
void fitDialogToScreen(QWidget* dialog, QSize preferred, QSize frame = QSize(0, 40));

// A side column of controls in a scroll area never needs horizontal scrolling: its width is at
// least the controls' minimum plus the vertical scroll bar (it scrolls vertically on short screens),
// re-measured whenever the controls' layout changes (presentation mode's larger font, issue 47).
// A frameless area that scrolls `content` vertically only (its lines wrap to the width instead):
// a dialog box or a tab that keeps its size and its buttons in view when its content grows.
QScrollArea* verticalScrollArea(QWidget* content);
void fitSideColumn(QScrollArea* scroll);

// A table's name column (long module paths) is at most `maxWidth` px wide, elided in the middle
// (whole name in the cell's tooltip when the model gives one), so the columns after it stay in
// view; it is re-measured whenever the model is reset, and its bound grows with the font
// (presentation mode keeps about as many characters in view).
void boundNameColumn(QTableView* table, int column, int maxWidth);

}  // namespace tinyscope::ui
