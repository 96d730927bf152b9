#include "AppState.h"

#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

namespace tinyscope::ui {

AppState::AppState(QObject* parent) : QObject(parent)
{
    workspace_ = shippedWorkspace(shippedWorkspaceNames().front());
    subnet_ = ArchSampler(workspace_.space).labMaxConfig(workspace_.space.resolutions.front());
    board_ = loadBoard(workspace_.board);
    spaceKey_ = keyOf(workspace_.space);
}

void AppState::switchTo(Workspace next)
{
    std::string newKey = keyOf(next.space);
    const bool sameSpace = spaceKey_ == newKey;
    kept_[spaceKey_] = Kept{subnet_, board_};
    BoardProfile board = board_;
    SubnetConfig subnet = subnet_;
    if (!sameSpace) {
        subnet = ArchSampler(next.space).labMaxConfig(next.space.resolutions.front());
        if (const auto k = kept_.find(newKey); k != kept_.end()) {
            subnet = k->second.subnet;   // kept for exactly this space: valid in it
            board = k->second.board;
        } else {
            try {
                board = loadBoard(next.board);
            } catch (const std::exception&) {
                board = loadBoard(kDefaultBoardName);
            }
        }
    }
    next.board = board.name;
    const bool boardDiffers = board.toJson() != board_.toJson();
    // The whole new state first, then the signals: a listener never sees a subnet of another space.
    workspace_ = std::move(next);
    board_ = board;
    subnet_ = subnet;
    spaceKey_ = std::move(newKey);
    Q_EMIT workspaceChanged();
    if (boardDiffers) Q_EMIT boardChanged();
    if (sameSpace) return;   // another supernet or data for the same space: the subnet stays
    Q_EMIT spaceChanged();
    Q_EMIT subnetChanged();
}

void AppState::setWorkspace(const Workspace& workspace) { switchTo(workspace); }

void AppState::setSpace(const DesignSpace& space, const QString& source) { switchTo(workspaceForSpace(space, source.toStdString())); }

void AppState::setBoard(const QString& nameOrPath)
{
    BoardProfile b = loadBoard(nameOrPath.toStdString());
    if (b.toJson() == board_.toJson()) return;
    board_ = std::move(b);
    workspace_.board = board_.name;
    Q_EMIT boardChanged();
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
