#pragma once
// The screenshot script of tinyscope-screenshots (tests/screenshots, not installed): what the docs'
// screenshots show, driven through the panels' public API. Not part of the shipped UI library.
#include <QSize>
#include <QString>

namespace tinyscope::ui {
class MainWindow;
}

namespace tinyscope::screenshots {

// The demonstration set at the window's current size: every panel after its runs, the design
// space's min/max/random states, the inspector's detail, the Deploy and Export dialogs, then the
// four panels as on a 1280×720 screen (<panel>-1280x720.png), search playback at generations 0, 10
// and 20 (search-playback-g<N>.png, also -1280x720). Without `measure`, the two
// screenshots that measure subnets on the shipped supernet (predictor-check.png,
// search-measured.png: about a minute of CPU) are left out. Returns the number of images written.
int writeDemoSet(ui::MainWindow& window, const QString& dir, bool measure);

// The four panels (design-space, predictor, search, training-inspector) after their runs, the
// window filling a screen of `screenPixels` at the application's device pixel ratio, written as
// DIR/<panel>-<suffix>.png. The runs' search history goes to a temporary file. Returns the number
// of images written.
int writePanelSet(ui::MainWindow& window, const QString& dir, QSize screenPixels, const QString& suffix);   // prints what it wrote

}  // namespace tinyscope::screenshots
