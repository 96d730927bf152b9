#include "AppState.h"

#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

namespace tinyscope::ui {

AppState::AppState(QObject* parent) : QObject(parent)
{
    workspace_ = shippedWorkspace(shippedWorkspaceNames().front());
    subnet_ = ArchSampler(workspace_.space).labMaxConfig(workspace_.space.resolutions.front());
}

void AppState::setWorkspace(const Workspace& workspace)
{
    const bool sameSpace = workspace.space.toJson() == workspace_.space.toJson();
    workspace_ = workspace;
    Q_EMIT workspaceChanged();
    if (sameSpace) return;   // another supernet or data for the same space: the subnet stays
    subnet_ = ArchSampler(workspace_.space).labMaxConfig(workspace_.space.resolutions.front());
    Q_EMIT spaceChanged();
    Q_EMIT subnetChanged();
}

void AppState::setSpace(const DesignSpace& space, const QString& source)
{
    workspace_ = workspaceForSpace(space, source.toStdString());
    subnet_ = ArchSampler(workspace_.space).labMaxConfig(workspace_.space.resolutions.front());
    Q_EMIT workspaceChanged();
    Q_EMIT spaceChanged();
    Q_EMIT subnetChanged();
}

void AppState::useSupernet(const QString& checkpoint)
{
    const Workspace w = workspaceForCheckpoint(checkpoint.toStdString(), workspace_);
    const bool switched = w.space.name != workspace_.space.name;
    setWorkspace(w);
    if (switched)
        Q_EMIT message(QStringLiteral("Workspace %1: the checkpoint's card names space %2")
                           .arg(QString::fromStdString(w.title), QString::fromStdString(w.space.name)));
}

void AppState::setSubnet(const SubnetConfig& config)
{
    if (config == subnet_) return;
    subnet_ = config;
    Q_EMIT subnetChanged();
}

}  // namespace tinyscope::ui
