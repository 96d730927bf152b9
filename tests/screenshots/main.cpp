// tinyscope-screenshots DIR [--no-measure] [--size WxH] [--scale F] [--skip-teaching | --teaching-only] [--loop]: renders the workbench's panels
// offscreen to PNG files (the docs' screenshots; test_screenshots and slow_screenshots check them). Built
// under tests/, never installed: it drives the panels as a demonstration script would.
//
// Without --size/--scale: the demonstration set at 1600×1000 (Screenshots.h), the four panels as on
// a 1280×720 screen (<panel>-1280x720.png) and as on a 1920×1080 screen at 150 % scaling
// (<panel>-150pct.png, 1920×1080 pixels: this program run again with --size 1920x1080 --scale 1.5).
// Then the teaching set (TeachingShots.h: each tour's first and last step, compare mode, as on a
// 1280×720 screen); --skip-teaching leaves it out (test_screenshots), --teaching-only writes it alone
// (test_teaching_screenshots).
// With --size and/or --scale: only the four panels, the window filling a WxH-pixel screen at device
// pixel ratio F (QT_SCALE_FACTOR, set before the application starts), as <panel>-WxH.png at scale
// 1 and <panel>-<F×100>pct.png otherwise.
// With --loop: only the loop of issue 46 (LoopShots.h: search → "Use this subnet" → Training
// inspector → Export verified on the emulated Cortex-M7 → Fine-tune) as on a 1280×720 screen,
// DIR/loop-{search,inspector,export-verified,finetune}.png (the dialog 1280×680); exits 1 unless all four were written.
// With --fit: only the fit set (FitShots.h, issue 47): every panel, the Training inspector's right
// tabs and every dialog on a 1280×720 screen (the offscreen screen is made that size), in normal and
// presentation mode, as DIR/fit-<shot>[-presentation].png; each shot's widget tree is checked (text
// that does not fit, "…" inside a name or number, truncated chart text, widgets outside the window,
// Evaluate / Run / a dialog's buttons out of view). Prints each problem; exits 1 when any remain.
#include "FitShots.h"
#include "LoopShots.h"
#include "Screenshots.h"
#include "TeachingShots.h"

#include "Error.h"
#include "GuiMain.h"
#include "MainWindow.h"
#include "io/DataPaths.h"
#include "io/OutputPaths.h"
#include "nn/TorchRuntime.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

constexpr const char* kUsage = "usage: DIR [--no-measure] [--size WxH] [--scale F] [--skip-teaching | --teaching-only] [--loop | --fit]";

struct Options {
    std::string dir;
    bool measure = true;
    bool teaching = true;        // the tours' and compare mode's screenshots (TeachingShots.h)
    bool teachingOnly = false;
    bool loop = false;           // the loop set alone (LoopShots.h)
    bool fit = false;            // the fit set alone (FitShots.h)
    int width = 0, height = 0;   // 0: the demonstration set
    double scale = 0;            // 0: not given
};

int refuse(const std::string& why)
{
    std::cerr << "tinyscope-screenshots: " << why << " (" << kUsage << ")\n";   // one line
    return 2;
}

// Returns 0 when the options are good, else the exit code after the message.
int parse(int argc, char** argv, Options& o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--no-measure") {
            o.measure = false;
        } else if (a == "--skip-teaching") {
            o.teaching = false;
        } else if (a == "--teaching-only") {
            o.teachingOnly = true;
        } else if (a == "--loop") {
            o.loop = true;
        } else if (a == "--fit") {
            o.fit = true;
        } else if (a == "--size") {
            if (!hasValue) return refuse("--size needs WxH, e.g. 1280x720");
            const QRegularExpressionMatch m =
                QRegularExpression(QStringLiteral("^([0-9]{3,5})x([0-9]{3,5})$")).match(QString::fromLocal8Bit(argv[++i]));
            if (!m.hasMatch()) return refuse(std::string("--size ") + argv[i] + ": expected WxH in pixels, e.g. 1280x720");
            o.width = m.captured(1).toInt();
            o.height = m.captured(2).toInt();
            if (o.width < 640 || o.height < 480 || o.width > 8000 || o.height > 8000)
                return refuse(std::string("--size ") + argv[i] + ": each side must lie in 640x480 .. 8000x8000");
        } else if (a == "--scale") {
            if (!hasValue) return refuse("--scale needs a factor, e.g. 1.5");
            char* end = nullptr;
            o.scale = std::strtod(argv[++i], &end);
            if (end == argv[i] || *end != '\0' || !(o.scale >= 1.0 && o.scale <= 4.0))
                return refuse(std::string("--scale ") + argv[i] + ": expected a factor from 1 to 4, e.g. 1.5");
        } else if (a.size() > 1 && a[0] == '-') {
            return refuse("unknown option " + a);
        } else if (o.dir.empty()) {
            o.dir = a;
        } else {
            return refuse("one folder only (got '" + o.dir + "' and '" + a + "')");
        }
    }
    if (o.dir.empty()) return refuse("the folder DIR is missing");
    if (o.loop && (o.width > 0 || o.scale > 0 || o.teachingOnly))
        return refuse("--loop writes the loop set alone, at 1280x720: not with --size, --scale or --teaching-only");
    if (o.fit && (o.width > 0 || o.scale > 0 || o.teachingOnly || o.loop))
        return refuse("--fit writes the fit set alone, at 1280x720: not with --size, --scale, --teaching-only or --loop");
    return 0;
}

// The offscreen platform's screen is 800×600 unless configured: for the fit set it is a 1280×720
// screen, so the main window and the dialogs fit the screen the shots are about.
void useFitScreen(const QString& dir)
{
    const char* platform = std::getenv("QT_QPA_PLATFORM");
    if (platform && std::strcmp(platform, "offscreen") != 0) return;
    QDir().mkpath(dir);   // DIR may not exist yet: without the file the screen would stay 800×600
    const QString config = dir + QStringLiteral("/.fit-screen.json");
    QFile f(config);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return;
    f.write(QStringLiteral("{\"screens\": [{\"name\": \"fit\", \"x\": 0, \"y\": 0, \"width\": %1, \"height\": %2, "
                           "\"logicalDpi\": 96, \"logicalBaseDpi\": 96, \"dpr\": 1}]}\n")
                .arg(tinyscope::screenshots::kFitScreen.width())
                .arg(tinyscope::screenshots::kFitScreen.height())
                .toUtf8());
    f.close();
    ::setenv("QT_QPA_PLATFORM", ("offscreen:configfile=" + config).toLocal8Bit().constData(), 1);
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    if (const int code = parse(argc, argv, o)) return code;
    try {
        tinyscope::requireWritableFolder(o.dir, "DIR");
    } catch (const tinyscope::InputError& e) {
        std::cerr << "tinyscope-screenshots: " << e.what() << "\n";
        return 2;
    }
    tinyscope::configureAllocator();
    tinyscope::setExecutablePath(argv[0]);
    const bool panelSet = o.width > 0 || o.scale > 0;
    if (o.scale <= 0) o.scale = 1.0;
    if (o.width == 0) o.width = 1600, o.height = 1000;
    if (o.fit || o.loop) useFitScreen(QString::fromLocal8Bit(o.dir.c_str()));   // both are "as on a 1280×720 screen"
    if (!std::getenv("QT_QPA_PLATFORM")) ::setenv("QT_QPA_PLATFORM", "offscreen", 1);
    // The device pixel ratio must be known before the application starts.
    ::setenv("QT_SCALE_FACTOR", QByteArray::number(o.scale).constData(), 1);
    int qargc = 1;
    QApplication app(qargc, argv);
    QApplication::setApplicationName(QStringLiteral("tinyscope"));
    QApplication::setOrganizationName(QStringLiteral("tinyscope"));
    tinyscope::ui::MainWindow window;
    const QString dir = QString::fromLocal8Bit(o.dir.c_str());
    if (panelSet) {
        const QString suffix = o.scale == 1.0 ? QStringLiteral("%1x%2").arg(o.width).arg(o.height)
                                              : QStringLiteral("%1pct").arg(std::lround(o.scale * 100));
        const int n = tinyscope::screenshots::writePanelSet(window, dir, QSize(o.width, o.height), suffix);
        return n == static_cast<int>(window.panels().size()) ? 0 : 1;
    }
    if (o.loop) {
        const int n = tinyscope::screenshots::writeLoopSet(window, dir);
        std::cout << "wrote " << n << " of 4 loop screenshots to " << o.dir << "\n" << std::flush;
        return tinyscope::ui::finishGui(n == 4 ? 0 : 1);
    }
    if (o.fit) {
        int written = 0;
        const QStringList problems = tinyscope::screenshots::writeFitSet(window, dir, written);
        QFile::remove(dir + QStringLiteral("/.fit-screen.json"));
        for (const QString& p : problems) std::cout << "fit: " << p.toStdString() << "\n";
        std::cout << "wrote " << written << " fit screenshots to " << o.dir << "; " << problems.size() << " problem"
                  << (problems.size() == 1 ? "" : "s") << "\n" << std::flush;
        return tinyscope::ui::finishGui(problems.isEmpty() && written > 0 ? 0 : 1);
    }
    if (o.teachingOnly) {
        const int n = tinyscope::screenshots::writeTourSet(dir) + tinyscope::screenshots::writeCompareSet(dir);
        std::cout << "wrote " << n << " screenshots to " << o.dir << "\n" << std::flush;
        return tinyscope::ui::finishGui(n > 0 ? 0 : 1);
    }
    window.resize(o.width, o.height);
    int n = tinyscope::screenshots::writeDemoSet(window, dir, o.measure);
    if (o.teaching) n += tinyscope::screenshots::writeTourSet(dir) + tinyscope::screenshots::writeCompareSet(dir);
    std::cout << "wrote " << n << " screenshots to " << o.dir << "\n" << std::flush;
    // The 150 % set: a second process, since the device pixel ratio is fixed when it starts.
    QProcess scaled;
    scaled.setProcessChannelMode(QProcess::ForwardedChannels);
    scaled.start(QCoreApplication::applicationFilePath(), {dir, QStringLiteral("--size"), QStringLiteral("1920x1080"),
                                                           QStringLiteral("--scale"), QStringLiteral("1.5")});
    if (!scaled.waitForFinished(-1) || scaled.exitStatus() != QProcess::NormalExit || scaled.exitCode() != 0) {
        std::cerr << "tinyscope-screenshots: the 150 % set failed\n";
        return tinyscope::ui::finishGui(1);
    }
    // Ends as `tinyscope gui` ends: jobs cancelled, and a Graphviz layout still running (MIT's graph
    // is opened but not waited for with --no-measure) does not hold the exit for a minute.
    return tinyscope::ui::finishGui(n > 0 ? 0 : 1);
}
