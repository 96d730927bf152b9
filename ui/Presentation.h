#pragma once
// Presentation mode (issue 22): larger text and thicker chart lines for a projector, one toggle
// (View → Presentation mode, F5). The application font grows by `kScale` (every widget and table
// that does not set its own), and every chart shown — and every chart built while the mode is on
// (replaceChart, addSeriesOn) — gets its title, legend and axis fonts, line widths and marker sizes
// scaled by the same factor. Turning it off restores the sizes. Not remembered between runs: a
// projector session is a temporary state.
class QChart;
class QAbstractSeries;
class QWidget;

namespace tinyscope::ui {

class Presentation {
public:
    static constexpr double kScale = 1.3;

    static bool on();
    static double scale() { return on() ? kScale : 1.0; }
    // Switches the whole application: its font and every chart that exists now.
    static void set(bool on);
    // Brings `chart` (fonts, its series' pens and markers) to the current scale; a chart remembers
    // the scale it has, so calling this again does nothing.
    static void style(QChart* chart);
    // A series added to an already styled chart: brought to the chart's scale.
    static void styleSeries(QChart* chart, QAbstractSeries* series);
    // A side column's minimum and maximum widths (px at the normal font) grow with the mode, so its
    // labels, buttons and spin boxes keep their room at the larger font (issue 47); re-applied on
    // each font change. 0 leaves that bound alone.
    static void followWidths(QWidget* column, int minWidth, int maxWidth);
};

}  // namespace tinyscope::ui
