#pragma once
// The Search panel's Pareto chart: predicted top-1 against a cost chosen in a combo box (MACs,
// peak SRAM, params, flash), every evaluated subnet coloured by another cost in five bands, the
// front for the plotted cost as a step line, the limit on that cost as a dashed line and the
// winner as a large square. Holds the typed SearchResult it shows and redraws on an axis change.
//
// Playback (issue 22): at generation g the points evaluated up to g are drawn faded, the
// population after g on top of them (parents kept as open circles, mutation and crossover
// children in two markers and colours; the initial or random draws in a third), the best so far
// as a star; the axes keep the whole run's range so nothing jumps while it plays. A run without
// recorded populations (stored before playback) shows the points evaluated in g instead. Every
// point says its config and numbers on hover; a click emits candidateClicked.
#include "search/SearchResult.h"
#include "space/DesignSpace.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QChartView;
class QScatterSeries;
class QValueAxis;

namespace tinyscope::ui {

class ChartLegend;

// "resolution 128 px, width ×0.75, depths 2·3·3, 14 blocks: kernel 3 ×6, 5 ×5, 7 ×3; expand 3 ×4, 4 ×5, 6 ×5"
QString configInWords(const SubnetConfig& c, const DesignSpace& space);

class ParetoChart : public QWidget {
    Q_OBJECT
public:
    explicit ParetoChart(QWidget* parent = nullptr);

    // nullptr clears the chart. Over kMaxPoints evaluated subnets, an even spread of 2,000 is plotted.
    // Shows the whole run (generation = the last one). `space`: the configs' space (hover text).
    void showResult(std::shared_ptr<const SearchResult> result, const DesignSpace& space = DesignSpace());
    int points() const { return points_; }   // points plotted (evaluated + front)
    static constexpr std::size_t kMaxPoints = 20000;

    // Playback: shows the run as it stood after generation `g` (clamped to the run's generations).
    void setGeneration(int g);
    int generation() const { return generation_; }
    // What is drawn as the population of the shown generation (indices into result->evaluated, in
    // the recorded order), and as its mutation / crossover children; the best so far (or -1).
    const std::vector<std::size_t>& populationShown() const { return population_; }
    int mutationShown() const { return mutationShown_; }
    int crossoverShown() const { return crossoverShown_; }
    long long bestShown() const { return best_; }
    bool populationRecorded() const { return result_ && !result_->populations.empty(); }
    // One line about the generation shown: "generation 10 of 20: 62 subnets (12 kept, …) · best so far 91.2 %".
    QString summary() const;
    // The hover text of evaluated[index]: its generation and origin, config in words and numbers.
    QString pointText(std::size_t index) const;

    QChartView* view() const { return view_; }
    ChartLegend* legend() const { return legend_; }
    // The scatter series drawn (for tests: where to click) and the candidate behind each of their points.
    const std::vector<std::pair<QScatterSeries*, std::vector<std::size_t>>>& scatterSeries() const { return hits_; }

Q_SIGNALS:
    void candidateClicked(std::size_t index);   // into the shown result's evaluated

private:
    // redraw() in pieces: the points in colour bands, the front's step line, the limit line (returns
    // the limit drawn, NaN without one), a generation's population at playback, the winner or best so far.
    void redraw();
    void drawBands(const std::vector<std::size_t>& upTo, int colourAxis, double clo, double chi, bool faded);
    void drawFront(const std::vector<std::size_t>& upTo, int xAxis, bool partial);
    double drawLimit(int xAxis, double ylo, double yhi);
    void drawPopulation(const std::vector<std::size_t>& plotted);
    void drawWinner(bool partial, bool playback);
    QScatterSeries* addScatter(const QString& name, const QColor& fill, const QColor& border, int shape, double size,
                               const std::vector<std::size_t>& candidates);

    QComboBox* axis_;
    QChartView* view_;
    ChartLegend* legend_;
    QValueAxis* x_;
    QValueAxis* y_;
    std::shared_ptr<const SearchResult> result_;
    DesignSpace space_;
    int generation_ = -1;
    int points_ = 0;
    std::vector<std::size_t> population_;
    int mutationShown_ = 0, crossoverShown_ = 0;
    long long best_ = -1;
    std::vector<std::pair<QScatterSeries*, std::vector<std::size_t>>> hits_;
};

}  // namespace tinyscope::ui
