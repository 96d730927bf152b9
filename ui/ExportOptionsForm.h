#pragma once
// The Export dialog's settings: the output folder, the file stem, the form (reference / faithful,
// ExportForm), the board to check against (or none) and "refuse on errors". It knows nothing of
// checking or writing: it says when a setting the checked plan depends on changed.
#include "nn/quantize/QuantizationJob.h"
#include "tinyengine/BoardProfile.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLineEdit;

namespace tinyscope::ui {

class BoardPicker;

class ExportOptionsForm : public QWidget {
    Q_OBJECT
public:
    // Starts from the request's file stem and form.
    explicit ExportOptionsForm(const ExportRequest& request, QWidget* parent = nullptr);

    void setOutputFolder(const QString& dir);
    QString outputFolder() const;
    void setForm(ExportForm form);
    ExportForm form() const;
    QString name() const;                            // the file stem, trimmed
    void setBoard(const QString& name);              // a preset name, or empty for none
    QString boardName() const;                       // empty for none
    std::optional<BoardProfile> board() const;
    bool strict() const;                             // refuse to write when the checker finds errors
    void setLocked(bool locked);                     // form, board and stem, while a job runs

Q_SIGNALS:
    void planChanged();     // the form, the board or the stem changed: the checked plan is stale
    void boardChanged();    // after planChanged
    void folderChanged();

private:
    QLineEdit* folder_;
    QLineEdit* name_;
    QComboBox* form_;
    BoardPicker* board_;
    QCheckBox* strict_;
};

}  // namespace tinyscope::ui
