#pragma once
// The workbench window: one tab per job (Design space, Training inspector, and the later
// Predictor and Search panels), a File menu for subnet configs, a status bar.
#include <QMainWindow>

namespace tinyscope {
struct Tour;
}

class QAction;
class QDockWidget;
class QTabWidget;

namespace tinyscope::ui {

class AppState;
class DesignSpacePanel;
class TrainingInspectorPanel;
class CompressPanel;
class PredictorPanel;
class SearchPanel;
class TourActions;
class TourPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    AppState* state() const { return state_; }
    DesignSpacePanel* designSpacePanel() const { return designSpace_; }
    TrainingInspectorPanel* trainingInspectorPanel() const { return trainingInspector_; }
    CompressPanel* compressPanel() const { return compress_; }
    PredictorPanel* predictorPanel() const { return predictor_; }
    SearchPanel* searchPanel() const { return search_; }
    QTabWidget* tabs() const { return tabs_; }
    TourPanel* tourPanel() const { return tour_; }
    QDockWidget* tourDock() const { return tourDock_; }
    QAction* presentationAction() const { return presentation_; }   // View → Presentation mode

    // Each panel with the file-name stem used by the screenshot tool (tests/screenshots).
    struct PanelEntry {
        QString stem;
        QWidget* widget;
    };
    QList<PanelEntry> panels() const;

    bool openConfig(const QString& path);   // shows a dialog on error
    // Help → Tours: shows the tour panel and performs the first step; a file's error is shown in
    // a dialog naming the file, the JSON path and the reason (returns false).
    void startTour(const Tour& tour);
    bool startTourFile(const QString& path);
    bool saveConfig(const QString& path);

private:
    void buildMenus();
    void addTourActions(TourActions& actions);   // the tour actions the window itself performs, then each panel's

    AppState* state_;
    QTabWidget* tabs_;
    DesignSpacePanel* designSpace_;
    TrainingInspectorPanel* trainingInspector_;
    CompressPanel* compress_;
    PredictorPanel* predictor_;
    SearchPanel* search_;
    QDockWidget* tourDock_;
    TourPanel* tour_;
    QAction* presentation_ = nullptr;
};

}  // namespace tinyscope::ui
