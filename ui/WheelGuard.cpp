#include "WheelGuard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QWheelEvent>

namespace tinyscope::ui {

void WheelGuard::install()
{
    static WheelGuard* guard = nullptr;
    if (guard || !qApp) return;
    guard = new WheelGuard(qApp);
    qApp->installEventFilter(guard);
}

bool WheelGuard::guards(const QWidget* w)
{
    return qobject_cast<const QComboBox*>(w) || qobject_cast<const QAbstractSpinBox*>(w) || qobject_cast<const QAbstractSlider*>(w);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::Wheel && event->type() != QEvent::Polish) return false;
    auto* w = qobject_cast<QWidget*>(watched);
    if (!w || !guards(w)) return false;
    // A scroll bar is a slider too, but it is what the wheel is for.
    if (w->inherits("QScrollBar")) return false;
    if (event->type() == QEvent::Polish) {
        if (w->focusPolicy() == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
        return false;
    }
    if (w->hasFocus()) return false;
    // Not handled here: QApplication passes the event on to the parent (the scroll area).
    static_cast<QWheelEvent*>(event)->ignore();
    return true;
}

}  // namespace tinyscope::ui
