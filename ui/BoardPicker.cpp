#include "BoardPicker.h"

#include "AppState.h"

namespace tinyscope::ui {

BoardPicker::BoardPicker(bool offerNone, QWidget* parent) : QComboBox(parent), offersNone_(offerNone)
{
    if (offersNone_) addItem(QStringLiteral("none — no board check"), QString());
    for (const std::string& n : presetBoardNames()) {
        const BoardProfile b = presetBoard(n);
        addItem(QStringLiteral("%1 — %2 KB SRAM, %3 KB flash, %4")
                    .arg(QString::fromStdString(b.name))
                    .arg(b.sram_bytes / 1024)
                    .arg(b.flash_bytes / 1024)
                    .arg(QString::fromStdString(b.core)),
                QString::fromStdString(b.name));
    }
}

QString BoardPicker::boardName() const { return currentData().toString(); }

std::optional<BoardProfile> BoardPicker::board() const
{
    const std::string name = boardName().toStdString();
    if (name.empty()) return std::nullopt;
    return presetBoard(name);
}

void BoardPicker::setBoard(const QString& name)
{
    const int i = findData(name);
    if (i >= 0) setCurrentIndex(i);
    else if (offersNone_) setCurrentIndex(0);
}

void BoardPicker::follow(AppState* state)
{
    // A side column's picker: the name and SRAM on the entry, the rest in its tooltip.
    for (int i = 0; i < count(); ++i) {
        const QString name = itemData(i).toString();
        if (name.isEmpty()) continue;
        const BoardProfile b = presetBoard(name.toStdString());
        setItemData(i, itemText(i), Qt::ToolTipRole);
        setItemText(i, QStringLiteral("%1 · %2 KB SRAM").arg(name).arg(b.sram_bytes / 1024));
    }
    auto show = [this, state] {
        // A board file that is not a preset gets its own entry.
        const QString name = state->boardName();
        if (findData(name) < 0) {
            const BoardProfile& b = state->board();
            addItem(QStringLiteral("%1 — %2 KB SRAM, %3 KB flash (file)").arg(name).arg(b.sram_bytes / 1024).arg(b.flash_bytes / 1024), name);
        }
        setBoard(name);
    };
    show();
    connect(state, &AppState::boardChanged, this, show);
    connect(this, qOverload<int>(&QComboBox::activated), state, [this, state] {
        if (!boardName().isEmpty() && boardName() != state->boardName()) state->setBoard(boardName());
    });
}

}  // namespace tinyscope::ui
