#pragma once
// The Search panel's winner card: the winner's predicted top-1 and costs (and its fine-tuning
// memory when that was limited), the oracle's warnings, the measurement on the supernet once made,
// the buttons Use this subnet / Measure on the supernet / Deploy…, and the winner's block diagram
// (right-click saves it). The card's diagram is a thumbnail on a 1280×720 screen: "⤢ Full size" in
// its corner opens it in a window of its own, nine tenths of the screen (issue 47). It shows a
// typed SearchResult; the panel does what the buttons ask.
#include "nn/accuracy/WinnerMeasurement.h"
#include "search/SearchResult.h"
#include "space/DesignSpace.h"

#include <QWidget>

#include <memory>
#include <string>

class QDialog;
class QLabel;
class QPushButton;
class QToolButton;

namespace tinyscope::ui {

class SubnetDiagramView;

class WinnerCard : public QWidget {
    Q_OBJECT
public:
    explicit WinnerCard(QWidget* parent = nullptr);

    // The winner of `result` (nullptr, or nothing found: "no subnet"); `space`: its configs' space.
    void showWinner(std::shared_ptr<const SearchResult> result, const DesignSpace& space);
    // The line under the winner: `progress` while measuring, else `m` if it measured the winner shown.
    void setMeasurement(const WinnerMeasurement& m, bool measuring, const QString& progress);
    bool hasWinner() const { return result_ && result_->found; }
    const std::string& diagramDot() const;   // empty: no winner shown
    // The winner's diagram in its own window, nearly the screen's size (also the corner button).
    void openFullDiagram();
    SubnetDiagramView* diagram() const { return diagram_; }
    QToolButton* fullSizeButton() const { return fullSize_; }
    SubnetDiagramView* fullDiagram() const { return fullView_; }   // null until first opened
    QDialog* fullDiagramWindow() const { return fullWindow_; }

Q_SIGNALS:
    void useRequested();
    void measureRequested();   // also "Cancel measuring" while measuring
    void deployRequested();

private:
    QString winnerText() const;
    void drawFullDiagram();

    std::shared_ptr<const SearchResult> result_;
    DesignSpace space_;
    QString diagramError_;   // why the diagram could not be drawn
    bool measuring_ = false;
    QString base_;   // the winner's text without the measurement line
    QLabel* text_;
    QPushButton* use_;
    QPushButton* measure_;
    QPushButton* deploy_;
    SubnetDiagramView* diagram_;
    QToolButton* fullSize_;
    QDialog* fullWindow_ = nullptr;
    SubnetDiagramView* fullView_ = nullptr;
};

}  // namespace tinyscope::ui
