#pragma once
// The Training inspector's memory cards: extra memory (tiny-training's analytic count), training
// peak SRAM, inference peak SRAM, and inference peak + extra against the SRAM budget (the
// training-budget search's constraint), each with its exact bytes in the tooltip; plus the banner
// that says why a model has no graph, what TinyEngine cannot compile and what no tiny-training
// config can express.
#include <QWidget>

#include <cstdint>

class QLabel;

namespace tinyscope {
struct MemoryLedger;
}

namespace tinyscope::ui {

class TrainingLayerModel;

class MemoryCards : public QWidget {
    Q_OBJECT
public:
    explicit MemoryCards(QWidget* parent = nullptr);
    void showLedger(const MemoryLedger* ledger, double budgetKB);   // nullptr: dashes
    QString text() const;                                           // the four cards as plain text (tests)

private:
    QLabel* cards_[4];
};

class SchemeBanner : public QWidget {
    Q_OBJECT
public:
    explicit SchemeBanner(QWidget* parent = nullptr);
    void showFindings(const TrainingLayerModel& model);
    QString text() const;   // "" while hidden

private:
    QLabel* label_;
};

}  // namespace tinyscope::ui
