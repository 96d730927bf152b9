#include "JobProgressBar.h"

#include "JobRunner.h"

namespace tinyscope::ui {

JobProgressBar::JobProgressBar(JobRunner* jobs, StageWords words, QWidget* parent) : QProgressBar(parent), jobs_(jobs), words_(std::move(words))
{
    setRange(0, 100);
    setValue(0);
    setTextVisible(true);
    connect(jobs_, &JobRunner::progress, this, [this](qint64 done, qint64 total, const QString& stage) {
        setValue(total ? static_cast<int>(100 * done / total) : 0);
        if (!jobs_->cancelRequested()) setFormat(words_ ? words_(stage) : stage);
    });
}

void JobProgressBar::restart(const QString& text)
{
    setValue(0);
    setFormat(text);
}

void JobProgressBar::finish(const QString& text)
{
    setValue(100);
    setFormat(text);
}

}  // namespace tinyscope::ui
