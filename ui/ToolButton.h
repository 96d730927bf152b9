#pragma once
// A text tool button with its tooltip: the compact buttons of the panels' control rows.
#include <QString>
#include <QToolButton>

namespace tinyscope::ui {

inline QToolButton* toolButton(const QString& text, const QString& tip = QString())
{
    auto* b = new QToolButton;
    b->setText(text);
    b->setToolTip(tip);
    return b;
}

}  // namespace tinyscope::ui
