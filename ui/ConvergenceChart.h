#pragma once
// The Search panel's convergence chart: best accuracy so far and population mean per generation
// (a LiveLineChart), filled while a search runs and redrawn from a finished or re-opened run; a
// dashed line marks the generation search playback shows, and a hovered line says its value.
#include "LiveLineChart.h"

#include "search/SearchResult.h"

#include <vector>

namespace tinyscope::ui {

class ConvergenceChart : public LiveLineChart {
    Q_OBJECT
public:
    explicit ConvergenceChart(QWidget* parent = nullptr);

    void start(int generations);                                  // empty, x axis 0..generations
    void append(const GenerationStats& g);                        // one more generation
    void showHistory(const std::vector<GenerationStats>& history);   // a whole run
    void showGeneration(int g);                                   // the playback marker; g < 0 removes it
    int points() const { return count(0); }
};

}  // namespace tinyscope::ui
