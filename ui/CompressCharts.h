#pragma once
// The Compress panel's charts (issue 50): Lab 1's sensitivity curves and parameter bars, weight
// histograms, the channel-pruning speed-up bars, Lab 2's accuracy against model size and the
// k-means view of one tensor. Each builds a fresh chart for a QChartView (replaceChart).
#include "compress/WeightHistogram.h"

#include <QString>

#include <vector>

class QChart;

namespace tinyscope {
struct SensitivityCurve;
struct PruneResult;
struct WeightQuantResult;
struct WeightQuantRun;
}  // namespace tinyscope

namespace tinyscope::ui {

// Top-1 against sparsity, one line per layer (hover: layer, sparsity, top-1), the dense top-1 as a
// dashed line.
QChart* sensitivityChart(const std::vector<SensitivityCurve>& curves, double denseTop1);
// Parameters per layer (short layer names; hover: the full name and the count).
QChart* parameterBarsChart(const std::vector<std::string>& layers, const std::vector<std::int64_t>& params);
// Weight histograms over one axis (density per bin), e.g. before and after pruning.
QChart* histogramChart(const QString& title, const std::vector<std::pair<QString, WeightHistogram>>& histograms);
// Original and pruned network per measure, in percent of the original (hover: the values).
QChart* speedupChart(const PruneResult& r);
// Top-1 against model size (KiB, the lab's params × bits), one line per method, before and after QAT.
QChart* accuracySizeChart(const WeightQuantResult& r);
// One tensor's weights (every k-th) against their index, coloured by cluster (k-means) or level.
QChart* clusterChart(const WeightQuantRun& run);

// "blocks.3.mobile_inverted_conv.depth_conv.conv.weight" → "b3 dw"
QString shortLayerName(const std::string& name);

}  // namespace tinyscope::ui
