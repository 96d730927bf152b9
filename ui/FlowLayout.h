#pragma once
// A layout that places its items left to right and wraps to a new line when the width runs out
// (legends that must not be cut on a 1280×720 screen; issue 19). Height follows width.
#include <QLayout>
#include <QList>

namespace tinyscope::ui {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr, int hSpacing = 6, int vSpacing = 2);
    ~FlowLayout() override;

    void addItem(QLayoutItem* item) override;
    int count() const override { return static_cast<int>(items_.size()); }
    QLayoutItem* itemAt(int index) const override { return items_.value(index); }
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override { return {}; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override { return arrange(QRect(0, 0, width, 0), false); }
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

private:
    int arrange(const QRect& rect, bool apply) const;   // returns the height used

    QList<QLayoutItem*> items_;
    int hSpacing_, vSpacing_;
};

// A widget laying out `widgets` in a FlowLayout (its height follows its width): a row of buttons or
// legend entries that wraps instead of widening its panel.
QWidget* wrappingRow(const QList<QWidget*>& widgets, int hSpacing = 6, int vSpacing = 3);

}  // namespace tinyscope::ui
