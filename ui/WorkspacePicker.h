#pragma once
// The Design-space panel's workspace picker: the shipped workspaces (space + supernet + predictor +
// data), then "Open space JSON…" for any space file. Choosing one sets it in AppState (a bad file
// is a warning, the picker goes back); the picker follows a space set elsewhere (e.g. a search run
// re-opened in its own space).
#include <QComboBox>

namespace tinyscope::ui {

class AppState;

class WorkspacePicker : public QComboBox {
    Q_OBJECT
public:
    explicit WorkspacePicker(AppState* state, QWidget* parent = nullptr);

    void showCurrent();   // select the entry of AppState's workspace

private:
    void choose(int index);

    AppState* state_;
};

}  // namespace tinyscope::ui
