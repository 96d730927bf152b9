#pragma once
// The fit set of tinyscope-screenshots (`--fit`, issue 47 "Fit and readability"): every panel, the
// Training inspector's right-side tabs and every dialog as on a 1280×720 screen, in normal and in
// presentation mode, each written as DIR/fit-<shot>[-presentation].png and checked over its widget
// tree (fitProblems). Not part of the shipped UI library.
#include <QSize>
#include <QString>
#include <QStringList>

class QWidget;

namespace tinyscope::ui {
class MainWindow;
}

namespace tinyscope::screenshots {

// The size every fit shot has: a 1280×720 screen (the main window fills it; a dialog fits in it).
inline constexpr QSize kFitScreen(1280, 720);

// What does not fit in `window` as it is now (shot = the name printed before each problem):
//  * a visible QLabel, QAbstractButton, QLineEdit, QAbstractSpinBox or QComboBox whose text is
//    wider than the room it has (a wrapping label: taller than its height), or that shows "…"
//    inside a word (an elided name or number);
//  * a visible widget, not inside a scroll area's viewport, reaching outside the window;
//  * a chart (QChartView) whose title, axis titles or labels Qt Charts truncated ("...", "…");
//  * `window` larger than kFitScreen (its minimum size does not fit the screen);
//  * each of `mustShow` (widgets that must be in view without scrolling) not wholly in view.
// A QLineEdit or editable QComboBox holding a path (a '/' in it) may scroll: a path is as long as
// it is, and the field shows its end with the caret.
QStringList fitProblems(QWidget* window, const QString& shot, const QList<QWidget*>& mustShow = {});

// Writes the fit set to DIR (the window is resized to kFitScreen) and returns the problems found
// in all shots, each "<shot>: <widget>: <what>"; `written` counts the PNG files.
QStringList writeFitSet(ui::MainWindow& window, const QString& dir, int& written);

}  // namespace tinyscope::screenshots
