#pragma once
// The mouse wheel changes only a control that has the focus (issue 47: scrolling a panel changed
// whatever combo box or spin box passed under the pointer, Data from test to holdout). One
// application-wide event filter: a combo box, spin box or slider without focus lets the wheel
// event pass to what holds it (the panel's scroll area scrolls); such controls take the focus by
// click or Tab (Qt::StrongFocus), never by the wheel. Installed once by MainWindow; dialogs and
// every later widget are covered.
#include <QObject>

class QWidget;

namespace tinyscope::ui {

class WheelGuard : public QObject {
    Q_OBJECT
public:
    // Installs the guard on the application (once; later calls do nothing).
    static void install();
    // The controls the guard covers: QComboBox, QAbstractSpinBox, QAbstractSlider.
    static bool guards(const QWidget* w);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    using QObject::QObject;
};

}  // namespace tinyscope::ui
