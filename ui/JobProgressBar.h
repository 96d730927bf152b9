#pragma once
// The progress bar of a dialog's jobs: follows its JobRunner's progress (percent of done/total, the
// stage said for people by `words`) on the GUI thread. Once a cancel was asked for, the stage text
// is left as it is (the dialog may say "cancelling…") until the job ends.
#include <QProgressBar>

#include <functional>

namespace tinyscope::ui {

class JobRunner;

class JobProgressBar : public QProgressBar {
    Q_OBJECT
public:
    using StageWords = std::function<QString(const QString& stage)>;
    // Without `words` the stage is shown as the job names it.
    explicit JobProgressBar(JobRunner* jobs, StageWords words = {}, QWidget* parent = nullptr);

    void restart(const QString& text);   // 0 %, `text`: a job starts
    void finish(const QString& text);    // 100 %, `text`: a job ended with its result

private:
    JobRunner* jobs_;
    StageWords words_;
};

}  // namespace tinyscope::ui
