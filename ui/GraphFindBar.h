#pragma once
// The graph view's top row: "find an op, layer or parameter" (Enter steps through the matches,
// wrapping, and says "k of n"), zoom out / in and Fit. The view answers the requests; the bar
// keeps where the last search stopped.
#include <QWidget>

#include <functional>

class QLabel;
class QLineEdit;

namespace tinyscope::ui {

class GraphFindBar : public QWidget {
    Q_OBJECT
public:
    explicit GraphFindBar(QWidget* parent = nullptr);

    // The next of the `count` items whose text contains `text` (case-insensitive) after the last
    // hit of the same query, wrapping; -1 when none. Shows "k of n" or "no match".
    int next(const QString& text, int count, const std::function<QString(int)>& itemText);
    void restart();   // a new graph: the next search starts at the top

Q_SIGNALS:
    void findRequested(const QString& text);
    void fitRequested();
    void zoomRequested(double factor);

private:
    QLineEdit* search_;
    QLabel* note_;
    QString lastQuery_;
    int lastHit_ = -1;
};

// The legend of the training graph's node and edge classes, from the palette the DOT uses; it
// wraps on a narrow pane.
QWidget* trainingGraphLegend();

}  // namespace tinyscope::ui
