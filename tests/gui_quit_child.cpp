// A child process for test_gui's prompt-exit check (issue 19): the workbench's window with a
// Graphviz layout running off the GUI thread (Graphviz cannot be interrupted), quit 1.5 s in, ending
// the way `tinyscope gui` ends (finishGui). The layout is of a large graph (3,000 nodes, 6,000 edges
// with long jumps) so that it outlasts the test's bound on any machine: the workbench's own panes lay
// out their graphs the same way (QtConcurrent + renderDotToSvg), for up to ~160 s on the largest
// training graphs. Prints "layout running: N" (background jobs at quit).
#include "GuiMain.h"
#include "MainWindow.h"

#include "viz/GraphvizRenderer.h"

#include <QApplication>
#include <QThreadPool>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdio>
#include <string>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    tinyscope::ui::MainWindow w;
    w.show();
    const int n = 3000;
    std::string dot = "digraph g {\n";
    for (int i = 0; i + 1 < n; ++i) dot += "n" + std::to_string(i) + " -> n" + std::to_string(i + 1) + ";\n";
    for (int i = 0; i < n; ++i) dot += "n" + std::to_string(i) + " -> n" + std::to_string((i * 7919) % n) + ";\n";
    dot += "}\n";
    QFuture<std::size_t> layout = QtConcurrent::run([dot] { return tinyscope::renderDotToSvg(dot).size(); });
    QTimer::singleShot(1500, &app, [&app] {
        std::printf("layout running: %d\n", QThreadPool::globalInstance()->activeThreadCount());
        std::fflush(stdout);
        app.quit();
    });
    return tinyscope::ui::finishGui(app.exec());
}
