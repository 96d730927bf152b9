#pragma once
// Many suites, one test program (tests/CMakeLists.txt, "Suite programs"): in a suite program
// (TINYSCOPE_SUITE_PROGRAM) a suite's QTEST_MAIN / QTEST_GUILESS_MAIN registers the suite under its
// file's name instead of defining main(), and tests/SuiteMain.cpp runs the suite named on the
// command line exactly as Qt Test's own main() would: `PROGRAM [--app=core|gui|widgets] SUITE
// [Qt Test arguments]`. Included by TestSupport.h after <QtTest>, whose macros it replaces.
#include <QObject>
#include <QtTest>

#include <memory>

namespace tinyscope::test {

struct SuiteEntry {
    const char* file;                       // the suite's __FILE__: its name is the file's base name
    std::unique_ptr<QObject> (*make)();     // the test object
    void (*initMain)();                     // its static initMain(), if any (Qt Test's order: before the application)
    bool guiless;                           // QTEST_GUILESS_MAIN: a QCoreApplication whatever the program links
};

// Adds the suite to the program's list (a static object per suite: constructed before main()).
struct SuiteRegistration {
    explicit SuiteRegistration(const SuiteEntry& entry);
};

template <typename Suite>
std::unique_ptr<QObject> makeSuite() { return std::make_unique<Suite>(); }
template <typename Suite>
void initSuiteMain() { QTest::Internal::callInitMain<Suite>(); }

}  // namespace tinyscope::test

#ifdef TINYSCOPE_SUITE_PROGRAM
#undef QTEST_MAIN
#undef QTEST_GUILESS_MAIN
#define TINYSCOPE_REGISTER_SUITE(Suite, guiless)                                                              \
    static const ::tinyscope::test::SuiteRegistration tinyscopeSuite##Suite(::tinyscope::test::SuiteEntry{   \
        __FILE__, &::tinyscope::test::makeSuite<Suite>, &::tinyscope::test::initSuiteMain<Suite>, guiless});
#define QTEST_MAIN(Suite) TINYSCOPE_REGISTER_SUITE(Suite, false)
#define QTEST_GUILESS_MAIN(Suite) TINYSCOPE_REGISTER_SUITE(Suite, true)
#endif
