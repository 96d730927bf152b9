#include "MainWindow.h"

#include "Presentation.h"

#include "TrainingGraphFile.h"

#include "AppState.h"
#include "CompressPanel.h"
#include "DesignSpacePanel.h"
#include "DiagramExport.h"
#include "TrainingInspectorPanel.h"
#include "PredictorPanel.h"
#include "ScreenFit.h"
#include "SearchPanel.h"
#include "TourDriver.h"
#include "TourPanel.h"
#include "WheelGuard.h"

#include "Version.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "tour/Tour.h"
#include "workspace/Workspace.h"

#include <QIcon>
#include <QApplication>
#include <QDesktopServices>
#include <QDockWidget>
#include <QFileDialog>
#include <QUrl>
#include <QMenuBar>
#include <QScreen>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

#include <algorithm>
#include <memory>

namespace tinyscope::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowIcon(QIcon(QStringLiteral(":/tinyscope.svg")));   // resources/tinyscope.qrc
    WheelGuard::install();   // the wheel changes only a focused combo box, spin box or slider (issue 47)
    state_ = new AppState(this);
    tabs_ = new QTabWidget;
    tabs_->setDocumentMode(true);
    designSpace_ = new DesignSpacePanel(state_);
    tabs_->addTab(designSpace_, QStringLiteral("Design space"));
    predictor_ = new PredictorPanel(state_);
    search_ = new SearchPanel(state_);
    search_->setOracle(predictor_->predictor());
    tabs_->addTab(predictor_, QStringLiteral("Predictor"));
    tabs_->addTab(search_, QStringLiteral("Search"));
    designSpace_->setAccuracyOracle(predictor_->predictor());
    connect(predictor_, &PredictorPanel::predictorChanged, this, [this] {
        search_->setOracle(predictor_->predictor());
        designSpace_->setAccuracyOracle(predictor_->predictor());
    });
    connect(search_, &SearchPanel::subnetUsed, this, [this] { tabs_->setCurrentWidget(designSpace_); });
    trainingInspector_ = new TrainingInspectorPanel(state_);
    // A TinyEngine search's winner brings its scheme (after the subnet: the inspector follows it first).
    connect(search_, &SearchPanel::winnerSchemeChosen, trainingInspector_, &TrainingInspectorPanel::applySchemePattern);
    tabs_->addTab(trainingInspector_, QStringLiteral("Training inspector"));
    compress_ = new CompressPanel(state_);
    tabs_->addTab(compress_, QStringLiteral("Compress"));
    setCentralWidget(tabs_);
    // The guided tour (Help → Tours) on the right, hidden until a tour starts.
    auto* driver = new TourDriver(this);
    addTourActions(driver->actions());
    tour_ = new TourPanel(state_, driver);
    tourDock_ = new QDockWidget(QStringLiteral("Tour"), this);
    tourDock_->setObjectName(QStringLiteral("tourDock"));
    tourDock_->setWidget(tour_);
    tourDock_->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
    addDockWidget(Qt::RightDockWidgetArea, tourDock_);
    tourDock_->hide();
    connect(tour_, &TourPanel::closeRequested, tourDock_, &QDockWidget::hide);
    connect(tourDock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        // Not while the window itself closes (the dock hides with it): then there is nothing to give
        // back to, and the window's parts are going.
        if (!visible && !tourDock_->isVisible() && isVisible()) tour_->stop();
    });
    buildMenus();
    connect(state_, &AppState::message, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    // The title names the current workspace; the status line too when another workspace opens (a
    // new supernet or predictor in the same one keeps whatever the status line says about it).
    auto showWorkspace = [this, shown = std::make_shared<std::string>()] {
        setWindowTitle(QStringLiteral("Tinyscope — %1").arg(state_->workspaceTitle()));
        if (*shown == state_->workspace().name) return;
        *shown = state_->workspace().name;
        statusBar()->showMessage(QStringLiteral("Workspace %1 (space %2) — pick a subnet, or press Random")
                                     .arg(state_->workspaceTitle(), QString::fromStdString(state_->space().name)));
    };
    connect(state_, &AppState::workspaceChanged, this, showWorkspace);
    showWorkspace();
    // Never larger than the screen (1280×720, 150 % scaling: issue 19); a screen smaller than the
    // preferred size is filled (issue 47; runGui shows the window maximised there).
    const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
    resize(initialWindowSize(screen ? screen->availableGeometry() : QRect()));
}

void MainWindow::addTourActions(TourActions& t)
{
    t.addAction("workspace", [this](const Json& g, TourRun&) {
        state_->setWorkspace(shippedWorkspace(g["name"].get<std::string>()));
        return true;
    });
    t.addAction("panel", [this](const Json& g, TourRun&) {
        const std::string p = g["panel"].get<std::string>();
        QWidget* panel = p == "design-space" ? static_cast<QWidget*>(designSpace_)
                         : p == "predictor"  ? static_cast<QWidget*>(predictor_)
                         : p == "search"     ? static_cast<QWidget*>(search_)
                         : p == "compress"   ? static_cast<QWidget*>(compress_)
                                             : static_cast<QWidget*>(trainingInspector_);
        tabs_->setCurrentWidget(panel);
        return true;
    });
    t.addAction("subnet-edit", [this](const Json& g, TourRun&) {
        const DesignSpace& space = state_->space();
        SubnetConfig c = state_->subnet();
        if (g.contains("image_size")) c.image_size = g["image_size"].get<int>();
        if (g.contains("wid")) c.wid = g["wid"].get<int>();
        if (g.contains("ks")) std::fill(c.ks.begin(), c.ks.end(), g["ks"].get<int>());
        if (g.contains("e")) std::fill(c.e.begin(), c.e.end(), g["e"].get<int>());
        if (g.contains("d"))
            for (std::size_t s = 0; s < c.d.size(); ++s)
                if (space.stages[s].elastic_depth) c.d[s] = g["d"].get<int>();
        c.validate(space, "space " + space.name);
        state_->setSubnet(c);
        return true;
    });
    // The highlight targets in the order of docs/TOURS.md: Design space, Predictor, Search, Training inspector, Compress.
    designSpace_->addTourActions(t);
    predictor_->addTourActions(t);
    search_->addTourActions(t);
    trainingInspector_->addTourActions(t);
    compress_->addTourActions(t);
    Q_ASSERT(t.targetNames() == TourDriver::targetNames());   // every name the core accepts has its widget
}

QList<MainWindow::PanelEntry> MainWindow::panels() const
{
    return {{QStringLiteral("design-space"), designSpace_},
            {QStringLiteral("predictor"), predictor_},
            {QStringLiteral("search"), search_},
            {QStringLiteral("training-inspector"), trainingInspector_},
            {QStringLiteral("compress"), compress_}};
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(QStringLiteral("&Open subnet config…"), QKeySequence::Open, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Open subnet config"), QString(),
                                                 QStringLiteral("Subnet config (*.json)"));
        if (!p.isEmpty()) openConfig(p);
    });
    file->addAction(QStringLiteral("&Save subnet config…"), QKeySequence::Save, this, [this] {
        QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Save subnet config"), QStringLiteral("subnet.json"),
                                                 QStringLiteral("Subnet config (*.json)"));
        if (!p.isEmpty()) saveConfig(p);
    });
    file->addAction(QStringLiteral("Save block &diagram…"), this, [this] {
        tabs_->setCurrentWidget(designSpace_);
        saveDiagramDialog(this, designSpace_->diagramDot(), designSpace_->diagramStem());
    });
    file->addSeparator();
    file->addAction(QStringLiteral("Open &training graph…"), this, [this] {
        if (auto im = openTrainingGraphDialog(this)) {
            tabs_->setCurrentWidget(trainingInspector_);
            trainingInspector_->showImportedGraph(*im);
        }
    });
    file->addSeparator();
    file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
    // Panels from the keyboard: Ctrl+1..5, and Ctrl+Tab / Ctrl+Shift+Tab to the next / previous one
    // (window-wide, also from inside a table).
    QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
    for (int i = 0; i < tabs_->count(); ++i) {
        QAction* a = view->addAction(tabs_->tabText(i), this, [this, i] { tabs_->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    view->addSeparator();
    auto step = [this](int by) { tabs_->setCurrentIndex((tabs_->currentIndex() + by + tabs_->count()) % tabs_->count()); };
    QAction* next = view->addAction(QStringLiteral("&Next panel"), this, [step] { step(1); });
    next->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::Key_PageDown)});
    QAction* previous = view->addAction(QStringLiteral("&Previous panel"), this, [step] { step(-1); });
    previous->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Backtab), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab),
                            QKeySequence(Qt::CTRL | Qt::Key_PageUp)});
    view->addSeparator();
    presentation_ = view->addAction(QStringLiteral("P&resentation mode"));
    presentation_->setCheckable(true);
    presentation_->setShortcut(QKeySequence(Qt::Key_F5));
    presentation_->setToolTip(QStringLiteral("Larger text and thicker chart lines for a projector (fits 1280×720)"));
    connect(presentation_, &QAction::toggled, this, [](bool on) { Presentation::set(on); });
    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    QMenu* tours = help->addMenu(QStringLiteral("&Tours"));
    for (const std::string& name : shippedTourNames()) {
        const Tour t = shippedTour(name);
        QAction* a = tours->addAction(QString::fromStdString(t.title), this, [this, name] { startTour(shippedTour(name)); });
        a->setToolTip(QString::fromStdString(t.summary));
    }
    tours->setToolTipsVisible(true);
    tours->addSeparator();
    tours->addAction(QStringLiteral("Open tour &file…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Open tour"), QString(), QStringLiteral("Tour (*.json)"));
        if (!p.isEmpty()) startTourFile(p);
    });
    help->addAction(QStringLiteral("&Documentation"), this, [this] {
        const std::string root = dataRoot();
        if (root.empty() || !QDesktopServices::openUrl(QUrl::fromLocalFile(QString::fromStdString(root + "/docs"))))
            QMessageBox::information(this, QStringLiteral("Documentation"),
                                     QStringLiteral("The documentation is the docs/ folder of Tinyscope's sources (README.md "
                                                    "lists each document)%1.")
                                         .arg(root.empty() ? QString() : QStringLiteral(": ") + QString::fromStdString(root + "/docs")));
    });
    help->addAction(QStringLiteral("&About Tinyscope"), this, [this] {
        QMessageBox::about(this, QStringLiteral("About Tinyscope"),
                           QStringLiteral("<b>Tinyscope</b> %1<br>Hardware-aware architecture search and on-device "
                                          "training inspection for tiny networks on microcontrollers.<br><br>"
                                          "Qt %2 · LibTorch · Graphviz")
                               .arg(QString::fromLatin1(tinyscopeVersion()), QString::fromLatin1(qVersion())));
    });
}

void MainWindow::startTour(const Tour& tour)
{
    tourDock_->show();
    tour_->start(tour);
}

bool MainWindow::startTourFile(const QString& path)
{
    try {
        startTour(readTourFile(path.toStdString()));
        return true;
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Open tour"), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::openConfig(const QString& path)
{
    try {
        state_->setSubnet(SubnetConfig::loadFile(path.toStdString(), state_->space()));
        statusBar()->showMessage(QStringLiteral("Opened %1").arg(path), 5000);
        return true;
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Open subnet config"), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::saveConfig(const QString& path)
{
    try {
        writeJsonFile(path.toStdString(), state_->subnet().toJson());
        statusBar()->showMessage(QStringLiteral("Saved %1").arg(path), 5000);
        return true;
    } catch (const std::exception& e) {
        QMessageBox::warning(this, QStringLiteral("Save subnet config"), QString::fromUtf8(e.what()));
        return false;
    }
}

}  // namespace tinyscope::ui
