#pragma once
// An error message in a dialog that does not block: a worker's failure arrives through the event
// loop, which must keep running (and a test must not hang on a modal box).
#include <QString>

class QWidget;

namespace tinyscope::ui {

void showErrorLater(QWidget* parent, const QString& title, const QString& text);

}  // namespace tinyscope::ui
