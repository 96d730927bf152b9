#include "WorkspacePicker.h"

#include "AppState.h"

#include "workspace/Workspace.h"

#include <QFileDialog>
#include <QMessageBox>

namespace tinyscope::ui {

WorkspacePicker::WorkspacePicker(AppState* state, QWidget* parent) : QComboBox(parent), state_(state)
{
    for (const std::string& n : shippedWorkspaceNames()) {
        const Workspace w = shippedWorkspace(n);
        // The title on the entry (the side column stays narrow), the space in its tooltip.
        addItem(QString::fromStdString(w.title), QString::fromStdString(n));
        setItemData(count() - 1, QStringLiteral("space %1").arg(QString::fromStdString(w.space.name)), Qt::ToolTipRole);
    }
    addItem(QStringLiteral("Open space JSON…"));
    setToolTip(QStringLiteral("A workspace is a design space with the supernet, predictor and data made for it"));
    connect(this, qOverload<int>(&QComboBox::activated), this, &WorkspacePicker::choose);
    connect(state_, &AppState::spaceChanged, this, &WorkspacePicker::showCurrent);
    connect(state_, &AppState::subnetChanged, this, &WorkspacePicker::showCurrent);
    showCurrent();
}

void WorkspacePicker::showCurrent()
{
    const int i = findData(QString::fromStdString(state_->workspace().name));
    if (i >= 0) setCurrentIndex(i);
}

void WorkspacePicker::choose(int index)
{
    try {
        if (index == count() - 1) {
            QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open design space"), QString(),
                                                        QStringLiteral("Design space (*.json)"));
            if (path.isEmpty()) {
                showCurrent();
                return;
            }
            state_->setSpace(DesignSpace::loadFile(path.toStdString()), path);
        } else {
            state_->setWorkspace(shippedWorkspace(itemData(index).toString().toStdString()));
        }
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Design space"), QString::fromUtf8(e.what()));
        showCurrent();
    }
}

}  // namespace tinyscope::ui
