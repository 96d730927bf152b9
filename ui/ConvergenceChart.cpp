#include "ConvergenceChart.h"

#include "Palette.h"

namespace tinyscope::ui {

ConvergenceChart::ConvergenceChart(QWidget* parent)
    : LiveLineChart(QStringLiteral("Convergence"), QStringLiteral("generation"), QStringLiteral("top-1 (%)"), false, parent)
{
    addSeries(QStringLiteral("best so far"), paletteColor("highlight"));          // series 0
    addSeries(QStringLiteral("population mean"), paletteColor("chart.series"));   // series 1
}

void ConvergenceChart::start(int generations)
{
    clear();
    setMarker(-1);
    setXSpan(generations);
}

void ConvergenceChart::showGeneration(int g) { setMarker(g); }

void ConvergenceChart::append(const GenerationStats& g)
{
    LiveLineChart::append(0, g.generation, g.best);
    LiveLineChart::append(1, g.generation, g.mean);
}

void ConvergenceChart::showHistory(const std::vector<GenerationStats>& history)
{
    start(history.empty() ? 1 : history.back().generation);
    for (const GenerationStats& g : history) append(g);
}

}  // namespace tinyscope::ui
