#include "GuiMain.h"

#include "JobRunner.h"
#include "MainWindow.h"

#include <QApplication>
#include <QIcon>
#include <QSettings>
#include <QThreadPool>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace tinyscope::ui {

int runGui(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--screenshot") == 0) {
            std::cerr << "tinyscope gui: --screenshot is gone; screenshots are written by the test tool "
                         "build/tests/screenshots/tinyscope-screenshots DIR [--no-measure] [--size WxH] [--scale F]\n";
            return 2;
        }
        if (std::strcmp(argv[i], "gui") != 0 && argv[i][0] == '-' && argv[i][1] == '-') {
            std::cerr << "tinyscope gui: unknown option " << argv[i] << " (it takes none; see 'tinyscope help')\n";
            return 2;
        }
    }
    if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM")) {
        std::cerr << "tinyscope: no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the GUI cannot open.\n"
                     "Run it under a desktop session or with `xvfb-run -a tinyscope`, or use the CLI, e.g.:\n"
                     "  tinyscope cost --max          # costs of the largest subnet\n"
                     "  tinyscope space show          # the design space\n"
                     "  tinyscope help                # every command\n";
        return 1;
    }
    int qargc = 1;
    QApplication app(qargc, argv);
    QApplication::setApplicationName(QStringLiteral("tinyscope"));
    QApplication::setOrganizationName(QStringLiteral("tinyscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/tinyscope.svg")));   // resources/tinyscope.qrc
    MainWindow window;
    window.show();
    return finishGui(app.exec());
}

int finishGui(int exitCode, int graceMs)
{
    JobRunner::cancelAll();   // every cancellable job stops at its next check
    QThreadPool* pool = QThreadPool::globalInstance();
    if (pool->activeThreadCount() == 0 || pool->waitForDone(graceMs)) return exitCode;
    QSettings().sync();
    std::fflush(nullptr);
    std::_Exit(exitCode);
}

}  // namespace tinyscope::ui
