#pragma once
// One horizontal bar of "used bytes against a capacity" (a board's SRAM or flash): the label on the
// left, the used part filled (red when it exceeds the capacity), and "used of capacity KB" written
// beside it. Without a capacity only the used figure is shown.
#include <QWidget>

#include <cstdint>

namespace tinyscope::ui {

class CapacityBar : public QWidget {
    Q_OBJECT
public:
    explicit CapacityBar(const QString& label, QWidget* parent = nullptr);

    // capacity <= 0: no capacity (the figure alone). `capacityName` names what the capacity is ("stm32f746").
    void setBytes(std::int64_t used, std::int64_t capacity, const QString& capacityName);
    void clear();
    // The width kept for the label on the left (default 56 px: "SRAM", "flash"); longer labels
    // ("TinyEngine") need more.
    void setLabelWidth(int px);

    std::int64_t used() const { return used_; }
    std::int64_t capacity() const { return capacity_; }
    bool over() const { return capacity_ > 0 && used_ > capacity_; }
    QString text() const;   // the figures as drawn beside the bar

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString label_, capacityName_;
    std::int64_t used_ = -1, capacity_ = 0;
    int labelWidth_ = 56;
};

}  // namespace tinyscope::ui
