#include "GuiMain.h"

#include "JobRunner.h"
#include "AppState.h"
#include "MainWindow.h"
#include "ScreenFit.h"
#include "Session.h"

#include <QApplication>
#include <QIcon>
#include <QScreen>
#include <QSettings>
#include <QThreadPool>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

namespace tinyscope::ui {

namespace {

// `tinyscope gui --screenshot DIR [options]`: the screenshot tool of the build tree
// (tests/screenshots/tinyscope-screenshots beside app/, never installed) in this process's place,
// so its output and exit code are the command's.
int runScreenshotTool(int argc, char** argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        std::cerr << "tinyscope gui: --screenshot needs a folder: tinyscope gui --screenshot DIR [--no-measure] [--size WxH] "
                     "[--scale F] [--skip-teaching | --teaching-only | --loop | --fit]\n";
        return 2;
    }
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path tool = exe.parent_path().parent_path() / "tests" / "screenshots" / "tinyscope-screenshots";
    if (ec || !std::filesystem::exists(tool)) {
        std::cerr << "tinyscope gui: --screenshot runs the screenshot tool built with the tests (build/tests/screenshots/"
                     "tinyscope-screenshots); there is none beside this program"
                  << (ec ? std::string() : " (looked for " + tool.string() + ")") << "\n";
        return 2;
    }
    std::vector<char*> args;
    std::string toolPath = tool.string();
    args.push_back(toolPath.data());
    for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    std::cout << std::flush;
    ::execv(toolPath.c_str(), args.data());
    std::cerr << "tinyscope gui: could not start " << toolPath << ": " << std::strerror(errno) << "\n";
    return 1;
}

}  // namespace

int runGui(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--screenshot") == 0) return runScreenshotTool(argc - i - 1, argv + i + 1);
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
    // The last session's workspace, board, subnet, "Measured by" and panel (Session.h).
    const QString notRestored = restoreSession(window, QSettings());
    QObject::connect(&app, &QApplication::aboutToQuit, &window, [&window] {
        QSettings settings;
        saveSession(window, settings);
    });
    // On a screen smaller than the window's preferred size (1280×720, 1366×768) it opens
    // maximised: every panel's primary controls in view (issue 47).
    const QScreen* screen = window.screen() ? window.screen() : QGuiApplication::primaryScreen();
    if (screen && opensMaximized(screen->availableGeometry())) window.showMaximized();
    else window.show();
    if (!notRestored.isEmpty()) Q_EMIT window.state()->message(notRestored);
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
