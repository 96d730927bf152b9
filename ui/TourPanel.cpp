#include "TourPanel.h"

#include "AppState.h"
#include "Palette.h"
#include "TourDriver.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace tinyscope::ui {

TourPanel::TourPanel(AppState* state, TourDriver* driver, QWidget* parent)
    : QWidget(parent),
      state_(state),
      driver_(driver),
      title_(new QLabel),
      position_(new QLabel),
      progress_(new QProgressBar),
      stepTitle_(new QLabel),
      text_(new QLabel),
      status_(new QLabel),
      back_(new QPushButton(QStringLiteral("‹ Back"))),
      next_(new QPushButton(QStringLiteral("Next ›"))),
      restart_(new QPushButton(QStringLiteral("Restart"))),
      close_(new QPushButton(QStringLiteral("Close")))
{
    auto* v = new QVBoxLayout(this);
    QFont big = title_->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.15);
    title_->setFont(big);
    title_->setWordWrap(true);
    progress_->setTextVisible(false);
    progress_->setMaximumHeight(6);
    progress_->setToolTip(QStringLiteral("How far into the tour you are"));
    QFont bold = stepTitle_->font();
    bold.setBold(true);
    stepTitle_->setFont(bold);
    stepTitle_->setWordWrap(true);
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    text_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::RichText);
    v->addWidget(title_);
    v->addWidget(position_);
    v->addWidget(progress_);
    v->addSpacing(6);
    v->addWidget(stepTitle_);
    v->addWidget(text_, 1);
    v->addWidget(status_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(back_);
    buttons->addWidget(next_);
    v->addLayout(buttons);
    auto* more = new QHBoxLayout;
    more->addWidget(restart_);
    more->addWidget(close_);
    v->addLayout(more);
    back_->setToolTip(QStringLiteral("The previous step (the tour is replayed up to it)"));
    next_->setToolTip(QStringLiteral("Perform the next step"));
    restart_->setToolTip(QStringLiteral("Back to the first step"));
    close_->setToolTip(QStringLiteral("End the tour (its dialogs and highlights close)"));
    connect(back_, &QPushButton::clicked, this, [this] { back(); });
    connect(next_, &QPushButton::clicked, this, [this] {
        if (step_ + 1 >= steps()) {
            stop();
            Q_EMIT closeRequested();
        } else {
            next();
        }
    });
    connect(restart_, &QPushButton::clicked, this, &TourPanel::restart);
    connect(close_, &QPushButton::clicked, this, [this] {
        stop();
        Q_EMIT closeRequested();
    });
    connect(driver_, &TourDriver::progress, this, [this](const QString& what) { status_->setText(what.toHtmlEscaped()); });
    connect(driver_, &TourDriver::finished, this, [this](bool ok, const QString& message) {
        ok_ = ok;
        status_->setText(ok ? QString() : colouredHtml("status.error", message));
        refresh();
        Q_EMIT stepDone(step_, ok, message);
    });
    setMinimumWidth(240);
    refresh();
}

void TourPanel::start(const Tour& tour)
{
    driver_->stop();
    driver_->closeDialogs();
    if (!before_) {
        const AppState& s = *state_;
        before_ = Before{s.workspace(), s.boardName(), s.subnet()};
    }
    tour_ = tour;
    title_->setText(QString::fromStdString(tour_.title));
    title_->setToolTip(QString::fromStdString(tour_.summary));
    progress_->setRange(0, steps());
    show(0, false);
}

bool TourPanel::busy() const { return driver_->busy(); }

QString TourPanel::statusText() const { return status_->text(); }

bool TourPanel::next()
{
    if (!hasTour() || busy() || step_ + 1 >= steps()) return false;
    show(step_ + 1, false);
    return true;
}

bool TourPanel::back()
{
    if (!hasTour() || step_ == 0) return false;
    show(step_ - 1, true);
    return true;
}

void TourPanel::restart()
{
    if (hasTour()) show(0, true);
}

void TourPanel::stop()
{
    driver_->stop();
    driver_->clearHighlights();
    driver_->closeDialogs();
    if (!before_) return;
    const Before b = *before_;
    before_.reset();
    AppState& s = *state_;
    const bool other = s.workspace().name != b.workspace.name || s.workspace().supernet != b.workspace.supernet ||
                       s.space().toJson() != b.workspace.space.toJson();
    try {
        if (other) s.setWorkspace(b.workspace);
        s.setBoard(b.board);
        s.setSubnet(b.subnet);   // valid: it was selected in this very workspace
    } catch (const std::exception& e) {
        Q_EMIT s.message(QStringLiteral("The tour could not bring back your workspace: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    if (other) Q_EMIT s.message(QStringLiteral("Tour closed: back in workspace %1").arg(s.workspaceTitle()));
}

void TourPanel::show(int step, bool replay)
{
    step_ = step;
    ok_ = true;
    const TourStep& s = tour_.steps[static_cast<std::size_t>(step)];
    position_->setText(QStringLiteral("Step %1 of %2").arg(step + 1).arg(steps()));
    progress_->setValue(step + 1);
    stepTitle_->setText(QString::fromStdString(s.title));
    text_->setText(QString::fromStdString(s.text));
    status_->clear();
    refresh();
    if (replay) {
        driver_->closeDialogs();
        driver_->perform(std::vector<TourStep>(tour_.steps.begin(), tour_.steps.begin() + step + 1));
    } else {
        driver_->perform({s});
    }
    refresh();   // a step still running (a search) disables Next until it ends
}

void TourPanel::refresh()
{
    const bool running = busy();
    back_->setEnabled(hasTour() && step_ > 0);
    next_->setEnabled(hasTour() && !running);
    next_->setText(hasTour() && step_ + 1 >= steps() ? QStringLiteral("Finish") : QStringLiteral("Next ›"));
    restart_->setEnabled(hasTour() && step_ > 0);
}

}  // namespace tinyscope::ui
