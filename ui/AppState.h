#pragma once
// The selection every panel shares: the workspace (design space + its supernet, predictor and
// data, core/workspace/Workspace.h) and the current subnet. Panels read it and call setSubnet();
// everyone listening to subnetChanged() redraws. The first start opens the default workspace
// (Fashion-MNIST: everything in it can be measured).
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "tinyengine/BoardProfile.h"
#include "workspace/Workspace.h"

#include <QObject>
#include <QString>

#include <map>
#include <string>

namespace tinyscope::ui {

class AppState : public QObject {
    Q_OBJECT
public:
    explicit AppState(QObject* parent = nullptr);

    const Workspace& workspace() const { return workspace_; }
    const DesignSpace& space() const { return workspace_.space; }
    const SubnetConfig& subnet() const { return subnet_; }
    // What identifies a space for what is kept per space (its JSON): spaceKey() is the open one's.
    static std::string keyOf(const DesignSpace& space) { return space.toJson().dump(); }
    const std::string& spaceKey() const { return spaceKey_; }
    QString spaceSource() const { return QString::fromStdString(workspace_.space_source); }
    QString workspaceTitle() const { return QString::fromStdString(workspace_.title); }

    // The board of the workspace (Workspace::board): every SRAM budget in the panels starts from
    // its SRAM and follows it; Deploy and Export check against it.
    const BoardProfile& board() const { return board_; }
    QString boardName() const { return QString::fromStdString(board_.name); }
    // A preset name or a board file (loadBoard); throws InputError. Emits boardChanged.
    void setBoard(const QString& nameOrPath);

    // Switches the whole set. Each space keeps its own subnet and board (issue 47): coming back to
    // a space brings back the subnet and board it was left with; a space seen for the first time
    // starts at the lab max and the workspace's board. Emits workspaceChanged, spaceChanged (when
    // the space differs), boardChanged (when the board differs) and subnetChanged.
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
    void boardChanged();
    // A short message for the status bar.
    void message(const QString& text);

private:
    struct Kept {
        SubnetConfig subnet;
        BoardProfile board;
    };
    // Keeps the current space's subnet and board, then moves to `next` (its own kept ones).
    void switchTo(Workspace next);

    Workspace workspace_;
    SubnetConfig subnet_;
    BoardProfile board_;
    std::map<std::string, Kept> kept_;   // by keyOf: what each space was left with
    std::string spaceKey_;               // keyOf(space())
};

}  // namespace tinyscope::ui
