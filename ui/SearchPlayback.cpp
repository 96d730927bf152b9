#include "SearchPlayback.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

namespace tinyscope::ui {

SearchPlayback::SearchPlayback(QWidget* parent) : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 0, 4, 0);
    outer->setSpacing(2);
    auto* row = new QHBoxLayout;
    play_ = new QPushButton;
    play_->setObjectName(QStringLiteral("playbackPlay"));
    slider_ = new QSlider(Qt::Horizontal);
    slider_->setObjectName(QStringLiteral("playbackSlider"));
    slider_->setToolTip(QStringLiteral("Generation shown on the Pareto chart: that generation's population over the faded points "
                                       "evaluated up to it, the best so far starred. Drag, or use the arrow keys"));
    slider_->setTickPosition(QSlider::TicksBelow);
    slider_->setPageStep(5);
    generation_ = new QLabel;
    generation_->setMinimumWidth(generation_->fontMetrics().horizontalAdvance(QStringLiteral("generation 000 / 000")));
    generation_->setToolTip(QStringLiteral("The generation shown and the run's last generation"));
    row->addWidget(play_);
    row->addWidget(slider_, 1);
    row->addWidget(generation_);
    outer->addLayout(row);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setToolTip(QStringLiteral("What the generation shown holds: the parents kept and the children made by mutation and by "
                                        "crossover (evolution), or the batch of random draws, and the best subnet found so far"));
    outer->addWidget(summary_);
    timer_ = new QTimer(this);
    timer_->setInterval(1000 / kGenerationsPerSecond);
    connect(timer_, &QTimer::timeout, this, &SearchPlayback::step);
    connect(play_, &QPushButton::clicked, this, [this] { playing() ? pause() : play(); });
    connect(slider_, &QSlider::valueChanged, this, [this](int g) {
        generation_->setText(QStringLiteral("generation %1 / %2").arg(g).arg(slider_->maximum()));
        Q_EMIT generationChanged(g);
    });
    setLastGeneration(-1);
}

void SearchPlayback::setLastGeneration(int last)
{
    pause();
    const QSignalBlocker block(slider_);
    slider_->setRange(0, std::max(0, last));
    slider_->setValue(std::max(0, last));
    slider_->setTickInterval(last > 40 ? 10 : last > 10 ? 5 : 1);
    setEnabled(last >= 0);
    generation_->setText(last >= 0 ? QStringLiteral("generation %1 / %1").arg(last) : QString());
    if (last < 0) summary_->clear();
}

int SearchPlayback::generation() const { return slider_->value(); }
void SearchPlayback::setGeneration(int g) { slider_->setValue(g); }
void SearchPlayback::setSummary(const QString& text) { summary_->setText(text); }
bool SearchPlayback::playing() const { return timer_->isActive(); }

void SearchPlayback::play()
{
    if (slider_->value() >= slider_->maximum()) slider_->setValue(0);
    timer_->start();
    refreshButton();
}

void SearchPlayback::pause()
{
    timer_->stop();
    refreshButton();
}

void SearchPlayback::step()
{
    if (slider_->value() >= slider_->maximum()) {
        pause();
        return;
    }
    slider_->setValue(slider_->value() + 1);
    if (slider_->value() >= slider_->maximum()) pause();
}

void SearchPlayback::refreshButton()
{
    const bool on = playing();
    play_->setText(on ? QStringLiteral("⏸ Pause") : QStringLiteral("▶ Play"));
    play_->setToolTip(on ? QStringLiteral("Stop the playback at the generation shown")
                         : QStringLiteral("Play the search generation by generation (%1 a second), from the start when at the last")
                               .arg(kGenerationsPerSecond));
}

}  // namespace tinyscope::ui
