// main() of a suite program (SuiteRegistry.h): runs one registered suite as Qt Test's QTEST_MAIN would,
// with the application kind the suite had as a program of its own (--app, set by tests/CMakeLists.txt).
#include "SuiteRegistry.h"

#include <QCoreApplication>
#ifdef QT_GUI_LIB
#include <QGuiApplication>
#endif
#ifdef QT_WIDGETS_LIB
#include <QApplication>
#endif

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tinyscope::test {
namespace {

std::vector<SuiteEntry>& suites()
{
    static std::vector<SuiteEntry> list;
    return list;
}

std::string suiteName(const char* file)
{
    std::string name = file;
    if (const auto slash = name.find_last_of('/'); slash != std::string::npos)
        name.erase(0, slash + 1);
    if (const auto dot = name.find_last_of('.'); dot != std::string::npos)
        name.erase(dot);
    return name;
}

int usage(const char* program, const char* why)
{
    std::fprintf(stderr, "%s\nusage: %s [--app=core|gui|widgets] SUITE [Qt Test arguments]\nsuites:", why, program);
    for (const SuiteEntry& s : suites())
        std::fprintf(stderr, " %s", suiteName(s.file).c_str());
    std::fprintf(stderr, "\n");
    return 2;
}

template <typename App>
int runIn(int argc, char** argv, const SuiteEntry& suite)
{
    App app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    std::unique_ptr<QObject> test = suite.make();
    QTest::setMainSourcePath(suite.file);
    return QTest::qExec(test.get(), argc, argv);
}

}  // namespace

SuiteRegistration::SuiteRegistration(const SuiteEntry& entry) { suites().push_back(entry); }

}  // namespace tinyscope::test

int main(int argc, char** argv)
{
    using namespace tinyscope::test;
    // The program's own default application, as QTEST_MAIN picks it from the Qt modules it links.
#if defined(QT_WIDGETS_LIB)
    std::string app = "widgets";
#elif defined(QT_GUI_LIB)
    std::string app = "gui";
#else
    std::string app = "core";
#endif
    int first = 1;
    if (argc > first && std::strncmp(argv[first], "--app=", 6) == 0)
        app = argv[first++] + 6;
    if (argc <= first)
        return usage(argv[0], "which suite?");
    const SuiteEntry* suite = nullptr;
    for (const SuiteEntry& s : suites())
        if (suiteName(s.file) == argv[first])
            suite = &s;
    if (!suite)
        return usage(argv[0], (std::string("no suite named '") + argv[first] + "' in this program").c_str());
    // Qt Test sees the program and the arguments after the suite's name.
    std::vector<char*> args{argv[0]};
    args.insert(args.end(), argv + first + 1, argv + argc);
    args.push_back(nullptr);
    int n = int(args.size()) - 1;
    suite->initMain();
    if (suite->guiless || app == "core")
        return runIn<QCoreApplication>(n, args.data(), *suite);
#ifdef QT_GUI_LIB
    if (app == "gui")
        return runIn<QGuiApplication>(n, args.data(), *suite);
#endif
#ifdef QT_WIDGETS_LIB
    if (app == "widgets")
        return runIn<QApplication>(n, args.data(), *suite);
#endif
    return usage(argv[0], ("this program cannot make a '" + app + "' application").c_str());
}
