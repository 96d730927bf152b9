#include "TeachingShots.h"

#include "DesignSpacePanel.h"
#include "SchemeCompareView.h"
#include "TrainingInspectorPanel.h"
#include "MainWindow.h"
#include "SearchPanel.h"
#include "TourPanel.h"
#include "tour/Tour.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <iostream>

namespace tinyscope::screenshots {

namespace {

// Waits (event loop running) until the shown step's actions ended; false if one failed.
bool settle(ui::TourPanel* panel)
{
    if (panel->busy()) {
        QEventLoop loop;
        QObject::connect(panel, &ui::TourPanel::stepDone, &loop, &QEventLoop::quit);
        QTimer::singleShot(180000, &loop, &QEventLoop::quit);
        loop.exec();
    }
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    if (!panel->lastStepOk())
        std::cerr << "tinyscope-screenshots: tour " << panel->tour().id << ", step " << panel->step() + 1 << ": "
                  << panel->statusText().toStdString() << "\n";
    return !panel->busy() && panel->lastStepOk();
}

}  // namespace

int writeTourSet(const QString& dir)
{
    QDir().mkpath(dir);
    QTemporaryDir history;
    int written = 0;
    for (const std::string& name : shippedTourNames()) {
        ui::MainWindow window;
        window.searchPanel()->setHistoryPath(history.filePath(QStringLiteral("search-history.json")));
        window.resize(1280, 720);
        window.show();
        window.startTour(shippedTour(name));
        ui::TourPanel* panel = window.tourPanel();
        const QString base = dir + QStringLiteral("/tour-") + QString::fromStdString(name);
        if (!settle(panel)) continue;
        written += window.grab().save(base + QStringLiteral("-first-1280x720.png"));
        bool ok = true;
        while (ok && panel->next()) ok = settle(panel);
        if (ok) written += window.grab().save(base + QStringLiteral("-last-1280x720.png"));
        panel->stop();
    }
    return written;
}

int writeCompareSet(const QString& dir)
{
    QDir().mkpath(dir);
    ui::MainWindow window;
    window.resize(1280, 720);
    window.show();
    ui::DesignSpacePanel* d = window.designSpacePanel();
    d->selectMin();
    d->pinCompare();
    d->selectLabMax();
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    int written = window.grab().save(dir + QStringLiteral("/design-space-compare-1280x720.png")) ? 1 : 0;
    // Two schemes of mcunet-5fps: bias-only (last 12) pinned as A, the published 49kb scheme as B.
    ui::TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    ti->selectModel(QStringLiteral("mcunet-5fps"));
    ti->applyBiasOnly(12);
    ti->rightTabs()->setCurrentWidget(ti->schemeCompare());
    ti->schemeCompare()->pin();
    ti->loadPublishedScheme(QStringLiteral("49kb"));
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    written += window.grab().save(dir + QStringLiteral("/training-compare-schemes-1280x720.png")) ? 1 : 0;
    // Presentation mode (View → Presentation mode) on the same two panels.
    window.presentationAction()->setChecked(true);
    for (const auto& [stem, panel] : {std::pair{QStringLiteral("design-space"), static_cast<QWidget*>(d)}, std::pair{QStringLiteral("training-inspector"), static_cast<QWidget*>(ti)}}) {
        window.tabs()->setCurrentWidget(panel);
        for (int i = 0; i < 5; ++i) QApplication::processEvents();
        written += window.grab().save(dir + QStringLiteral("/presentation-") + stem + QStringLiteral("-1280x720.png")) ? 1 : 0;
    }
    window.presentationAction()->setChecked(false);
    return written;
}

}  // namespace tinyscope::screenshots
