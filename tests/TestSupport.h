#pragma once
// Shared by the test suites: where ../shared/reference and the built tinyscope binary are.
#include "Error.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QString>
#include <QtTest>

#include "SuiteRegistry.h"

#include <algorithm>
#include <functional>
#include <string>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tinyscope::test {

inline QString sharedDir() { return QStringLiteral(TINYSCOPE_SHARED_DIR); }
inline std::string sharedPath(const char* relative) { return (sharedDir() + QLatin1Char('/') + QLatin1String(relative)).toStdString(); }
inline bool haveShared() { return QFileInfo::exists(sharedDir() + QStringLiteral("/reference")); }
inline QString tinyscopeBinary() { return QStringLiteral(TINYSCOPE_BINARY); }

// `tinyscope COMMAND` on the shipped supernet's smallest subnet with 40 test images and 100
// calibration images on one thread, as JSON, then `more` (the compression suites: seconds a run).
inline QStringList smallSubnetArgs(const QString& command, const QStringList& more)
{
    return QStringList{command, QStringLiteral("--config"), QStringLiteral("min"), QStringLiteral("--images"), QStringLiteral("40"),
                       QStringLiteral("--calib-images"), QStringLiteral("100"), QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--json")} +
           more;
}
inline QString sourceDir() { return QStringLiteral(TINYSCOPE_SOURCE_DIR); }
// A file of ../shared/reference/tinyengine (MIT's graph, params and reference outputs).
inline std::string tinyengineRef(const char* relative) { return sharedPath((std::string("reference/tinyengine/") + relative).c_str()); }
inline QString tinyengineRefPath(const char* relative) { return QString::fromStdString(tinyengineRef(relative)); }

// The message of the exception `f` throws, or "<no error>".
inline std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "<no error>";
}

// Sets an environment variable for a scope; the old value (or its absence) comes back after.
struct EnvOverride {
    QByteArray name, old;
    bool had;
    EnvOverride(const char* n, const QString& value) : name(n), old(qgetenv(n)), had(qEnvironmentVariableIsSet(n)) { qputenv(n, value.toLocal8Bit()); }
    ~EnvOverride()
    {
        if (had) qputenv(name.constData(), old);
        else qunsetenv(name.constData());
    }
    EnvOverride(const EnvOverride&) = delete;
    EnvOverride& operator=(const EnvOverride&) = delete;
};

// `tinyscope ARGS` as a user runs it: exit code (-1 on timeout, -2 on a crash), stdout, stderr.
struct CliRun {
    int code = -1;
    std::string out, err;
};

inline CliRun runTinyscope(const QStringList& args, int timeoutMs = 300000)
{
    QProcess p;
    p.start(tinyscopeBinary(), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput().toStdString(),
            p.readAllStandardError().toStdString()};
}
// The same, bounded at two minutes: a hang is named well before the suite's own limit.
inline CliRun runCli(const QStringList& args) { return runTinyscope(args, 120000); }

inline int lineCount(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The message of the InputError `f` throws; empty when it throws none.
inline QString inputErrorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const InputError& e) {
        return QString::fromUtf8(e.what());
    }
    return QString();
}

// Peak memory `f` adds, in KiB, measured in a forked child (ru_maxrss starts at the child's RSS at
// fork time); -1 if the child failed. Free heap is returned to the system first so that `f` cannot
// hide its allocations in pages already resident; call it before running `f` in this process.
// The child's exit code is 0 if `f` threw an InputError, 1 if it threw nothing, 2 otherwise.
inline long peakGrowthKB(const std::function<void()>& f, int* childExit = nullptr)
{
    malloc_trim(0);
    int fds[2];
    if (pipe(fds) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        rusage before{}, after{};
        getrusage(RUSAGE_SELF, &before);
        int code = 1;
        try {
            f();
        } catch (const InputError&) {
            code = 0;
        } catch (...) {
            code = 2;
        }
        getrusage(RUSAGE_SELF, &after);
        const long kb = after.ru_maxrss - before.ru_maxrss;
        (void)!write(fds[1], &kb, sizeof kb);
        _exit(code);
    }
    close(fds[1]);
    long kb = -1;
    if (read(fds[0], &kb, sizeof kb) != sizeof kb) kb = -1;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (childExit) *childExit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return kb;
}

}  // namespace tinyscope::test

// Reference data lives beside the repository (../shared); CI always has it.
#define REQUIRE_SHARED()                                                                                  \
    do {                                                                                                  \
        if (!tinyscope::test::haveShared())                                                               \
            QSKIP(qPrintable(QStringLiteral("reference data not found at %1 (../shared next to the repository)") \
                                 .arg(tinyscope::test::sharedDir())));                                    \
    } while (0)
