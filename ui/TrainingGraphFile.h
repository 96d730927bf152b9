#pragma once
// Opening a TinyEngine training graph from the GUI (File → Open training graph…): the graph JSON
// and, when they lie beside it, its params pickle (<stem>-params.pkl) and scale.json, imported
// into a TrainingGraph + recovered network and scheme that the graph view and the memory ledger read.
#include "tinyengine/GraphImport.h"

#include <QString>

#include <optional>

class QWidget;

namespace tinyscope::ui {

// The companion files found beside `graphPath` ("" when absent).
QString companionParams(const QString& graphPath);
QString companionScales(const QString& graphPath);

// Imports `graphPath` with its companions; throws InputError (naming the op and field) for a malformed file.
ImportedGraph openTrainingGraph(const QString& graphPath);

// Asks for a file and imports it; an error is shown in a message box and yields nothing.
std::optional<ImportedGraph> openTrainingGraphDialog(QWidget* parent);

}  // namespace tinyscope::ui
