#pragma once
// The Training inspector's "Compare schemes" tab (issue 22): sparse-update scheme A pinned, B the
// scheme being edited. A table of the ledger's memory figures (extra memory and its parts, training
// and inference peaks, the total the budget limits) for A, B and B − A, plus the top-1 the
// Fine-tune tab measured for each scheme when it has; and the extra memory and its parts of A and B
// as grouped bars on an axis that starts at A's extra memory and only grows while A is pinned, so a
// smaller B shows shorter bars, not a rescaled chart. A new model ends the comparison.
#include "graph/LedgerComparison.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>

class QChartView;
class QLabel;
class QPushButton;
class QTableWidget;

namespace tinyscope {
struct Network;
}

namespace tinyscope::ui {

class SchemeAccuracyScatter;
class TrainingLayerModel;

class SchemeCompareView : public QWidget {
    Q_OBJECT
public:
    SchemeCompareView(TrainingLayerModel* layers, SchemeAccuracyScatter* runs, QWidget* parent = nullptr);

    bool pin();        // false when the model has no ledger (no training graph)
    void unpin();
    bool pinned() const { return a_.has_value(); }

    // For tests: what is shown.
    const std::vector<ComparedMemory>& rows() const { return rows_; }
    QString cellText(int row, int column) const;
    double axisMaxKB() const { return axisMaxKB_; }
    QString schemeA() const { return schemeA_; }

private:
    void refresh();   // B: the layer model's current scheme
    std::optional<double> fineTunedTop1(const QString& scheme) const;
    void redraw();

    TrainingLayerModel* layers_;
    SchemeAccuracyScatter* runs_;
    std::shared_ptr<const Network> net_;   // A's model
    std::optional<MemoryLedger> a_;
    QString schemeA_, schemeB_;
    std::vector<ComparedMemory> rows_;
    double axisMaxKB_ = 0;
    QLabel* caption_;
    QPushButton* pin_;
    QTableWidget* table_;
    QChartView* chart_;
};

}  // namespace tinyscope::ui
