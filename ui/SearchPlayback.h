#pragma once
// Search playback controls (issue 22): a play / pause button and a slider over a run's
// generations, with a line saying what the shown generation holds. Playing advances
// kGenerationsPerSecond generations a second (a QTimer) and stops at the last; pressing play at
// the last generation starts again from 0. A new run puts it at its last generation, paused.
#include <QWidget>

class QLabel;
class QPushButton;
class QSlider;
class QTimer;

namespace tinyscope::ui {

class SearchPlayback : public QWidget {
    Q_OBJECT
public:
    static constexpr int kGenerationsPerSecond = 4;

    explicit SearchPlayback(QWidget* parent = nullptr);

    // Generations 0..last, shown at `last`, paused; last < 0 (no run) disables the controls.
    void setLastGeneration(int last);
    int generation() const;
    void setGeneration(int g);   // emits generationChanged when it changes
    void setSummary(const QString& text);

    void play();
    void pause();
    bool playing() const;
    QSlider* slider() const { return slider_; }
    QPushButton* playButton() const { return play_; }

Q_SIGNALS:
    void generationChanged(int generation);

private:
    void step();
    void refreshButton();

    QPushButton* play_;
    QSlider* slider_;
    QLabel* generation_;
    QLabel* summary_;
    QTimer* timer_;
};

}  // namespace tinyscope::ui
