#pragma once
// The selection every panel shares: the workspace (design space + its supernet, predictor and
// data, core/workspace/Workspace.h) and the current subnet. Panels read it and call setSubnet();
// everyone listening to subnetChanged() redraws. The first start opens the default workspace
// (Fashion-MNIST: everything in it can be measured).
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "workspace/Workspace.h"

#include <QObject>
#include <QString>

namespace tinyscope::ui {

class AppState : public QObject {
    Q_OBJECT
public:
    explicit AppState(QObject* parent = nullptr);

    const Workspace& workspace() const { return workspace_; }
    const DesignSpace& space() const { return workspace_.space; }
    const SubnetConfig& subnet() const { return subnet_; }
    QString spaceSource() const { return QString::fromStdString(workspace_.space_source); }
    QString workspaceTitle() const { return QString::fromStdString(workspace_.title); }

    // Switches the whole set; resets the subnet to the lab max. Emits workspaceChanged,
    // spaceChanged (when the space differs) and subnetChanged.
    void setWorkspace(const Workspace& workspace);
    // The workspace of `space` (workspaceForSpace: its shipped supernet and predictor, if any).
    void setSpace(const DesignSpace& space, const QString& source);
    // A checkpoint as the workspace's supernet. When its card names another preset space, the
    // workspace of that space is opened with it (said in message()). Throws InputError when that
    // space is not a preset.
    void useSupernet(const QString& checkpoint);
    void setSubnet(const SubnetConfig& config);   // must be valid for space()

Q_SIGNALS:
    void workspaceChanged();   // any part of the set (space, supernet, predictor, data)
    void spaceChanged();
    void subnetChanged();
    // A short message for the status bar.
    void message(const QString& text);

private:
    Workspace workspace_;
    SubnetConfig subnet_;
};

}  // namespace tinyscope::ui
