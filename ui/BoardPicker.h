#pragma once
// The board a result is checked against: a combo box of the preset boards (models/boards), each
// said with its SRAM, flash and core; optionally a first entry "none — no board check". Used by
// the Deploy and Export dialogs (starting at the workspace's board), and, bound to AppState with
// follow(), as the one place the workspace's board is chosen (the Design-space panel).
#include "tinyengine/BoardProfile.h"

#include <QComboBox>

#include <optional>

namespace tinyscope::ui {

class AppState;

class BoardPicker : public QComboBox {
    Q_OBJECT
public:
    explicit BoardPicker(bool offerNone, QWidget* parent = nullptr);

    QString boardName() const;                    // the preset's name; empty for none
    std::optional<BoardProfile> board() const;    // nullopt for none
    // A preset's name; an unknown name chooses none when offered, else keeps the current board.
    void setBoard(const QString& name);
    // Shows AppState's board and follows it; choosing an entry sets it there.
    void follow(AppState* state);

private:
    bool offersNone_;
};

}  // namespace tinyscope::ui
