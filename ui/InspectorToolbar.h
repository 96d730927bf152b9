#pragma once
// The Training inspector's two control rows. Row 1: the model picker, autodiff mode, SRAM budget,
// undo / redo, scheme files and the Export menu. Row 2: the published schemes, "bias-only, last
// N", "last k layers", reset, and the current scheme in words. The panel reads the controls and
// answers the requests.
#include <QWidget>

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QSpinBox;
class QToolButton;

namespace tinyscope::ui {

class InspectorToolbar : public QWidget {
    Q_OBJECT
public:
    InspectorToolbar(QAction* undo, QAction* redo, QWidget* parent = nullptr);

    QComboBox* modelBox;
    QComboBox* modeBox;
    QDoubleSpinBox* budget;
    QComboBox* publishedBox;
    QToolButton* loadPublished;
    QSpinBox* biasN;
    QSpinBox* lastK;
    QLabel* scheme;

    // The pattern controls follow a model: its published schemes, its backbone's conv count, the
    // starting bias-only N.
    void showModel(const QStringList& published, int backboneConvs, int biasOnlyN);
    void showScheme(const QString& description);   // "" = no model
    // Selects the picker's entry `data` without signals; when there is none, the entry
    // `fallbackData` (added when missing) titled `fallbackText`.
    void pickModel(const QString& data, const QString& fallbackData, const QString& fallbackText);

Q_SIGNALS:
    void loadPublishedRequested(const QString& name);
    void biasOnlyRequested(int n);
    void lastLayersRequested(int k);
    void resetRequested();
    void schemeFileRequested(bool save);            // Open scheme… / Save scheme…
    void exportGraphRequested(const QString& suffix);   // svg, png, dot
    void exportCsvRequested();
    void exportTinyEngineRequested();
    void weightsRequested();                         // Use int8 weights (params .pkl)…

private:
    QHBoxLayout* modelRow(QAction* undo, QAction* redo);   // row 1
    QHBoxLayout* schemeRow();                              // row 2
};

}  // namespace tinyscope::ui
