#include "BoardPicker.h"

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

}  // namespace tinyscope::ui
