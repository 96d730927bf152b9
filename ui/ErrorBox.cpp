#include "ErrorBox.h"

#include <QMessageBox>

namespace tinyscope::ui {

void showErrorLater(QWidget* parent, const QString& title, const QString& text)
{
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, parent);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

}  // namespace tinyscope::ui
