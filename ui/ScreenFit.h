#pragma once
// Fitting the workbench to small screens (issue 19: 1280×720, and 1920×1080 at 150 % scaling).
#include <QRect>
#include <QSize>

class QScrollArea;
class QTableView;

namespace tinyscope::ui {

// The main window's first size: `preferred` (1,600×1,000) where it fits, else at most 90 % of the
// screen's available geometry in each direction, so it never opens larger than the screen.
QSize initialWindowSize(const QRect& available, QSize preferred = QSize(1600, 1000));

// A side column of controls in a scroll area never needs horizontal scrolling: its width is at
// least the controls' minimum plus the vertical scroll bar (it scrolls vertically on short screens).
void fitSideColumn(QScrollArea* scroll);

// A table's name column (long module paths) is at most `maxWidth` px wide, elided in the middle
// (whole name in the cell's tooltip when the model gives one), so the columns after it stay in
// view; it is re-measured whenever the model is reset.
void boundNameColumn(QTableView* table, int column, int maxWidth);

}  // namespace tinyscope::ui
