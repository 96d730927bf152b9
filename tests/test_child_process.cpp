// Child processes die with the workbench: a pipeline started by runProcessGroup (the device run's
// shell script, TFLM, TinyEngine's code generator) and everything it started are killed when the
// process that started it is killed with SIGKILL, so nothing keeps running orphaned.
#include "TestSupport.h"

#include "io/ChildProcess.h"

#include <QTemporaryDir>

#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace tinyscope;

namespace {

struct ProcStat {
    char state = 0;   // 'R', 'S', 'Z', ...; 0: no such process
    pid_t group = 0;
};

ProcStat procStat(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(in, line);
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ')'.
    const auto close = line.rfind(')');
    ProcStat s;
    if (close == std::string::npos) return s;
    std::istringstream rest(line.substr(close + 1));
    long ppid = 0, pgrp = 0;
    rest >> s.state >> ppid >> pgrp;
    s.group = static_cast<pid_t>(pgrp);
    return s;
}

// The processes of process group `group` that still run (a zombie waiting for its reaper has ended).
std::set<pid_t> runningMembers(pid_t group)
{
    std::set<pid_t> out;
    DIR* d = ::opendir("/proc");
    if (!d) return out;
    while (const dirent* e = ::readdir(d)) {
        const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
        if (pid <= 0) continue;
        const ProcStat s = procStat(pid);
        if (s.group == group && s.state != 0 && s.state != 'Z') out.insert(pid);
    }
    ::closedir(d);
    return out;
}

}  // namespace

class TestChildProcess : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A forked "workbench" runs a pipeline — a shell that started a background job, as the device
    // run's script starts QEMU — and is killed with SIGKILL: within a few seconds nothing of the
    // pipeline's process group runs any more.
    void aPipelineDiesWithTheProcessThatStartedIt()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string pids = (dir.path() + QStringLiteral("/pids")).toStdString();
        const pid_t bench = ::fork();
        QVERIFY(bench >= 0);
        if (bench == 0) {
            ProcessGroupRun run;
            run.argv = {"/bin/sh", "-c", "sleep 300 & echo $$ $! > '" + pids + ".part' && mv '" + pids + ".part' '" + pids + "'; wait"};
            run.log_path = (dir.path() + QStringLiteral("/log")).toStdString();
            run.timeout_s = 300;
            try {
                runProcessGroup(run);
            } catch (...) {
            }
            ::_exit(0);
        }
        pid_t shell = 0, sleeper = 0;
        for (int i = 0; i < 600; ++i) {
            std::ifstream in(pids);
            if (in >> shell >> sleeper) break;
            shell = 0;
            QTest::qSleep(50);
        }
        const pid_t group = shell ? procStat(shell).group : 0;
        const std::set<pid_t> before = group > 0 ? runningMembers(group) : std::set<pid_t>();
        ::kill(bench, SIGKILL);
        int status = 0;
        ::waitpid(bench, &status, 0);
        std::set<pid_t> left = before;
        for (int i = 0; i < 100 && !left.empty(); ++i) {
            QTest::qSleep(50);
            left = runningMembers(group);
        }
        if (group > 1 && group != ::getpgrp()) ::kill(-group, SIGKILL);   // a failed run leaves nothing behind
        QVERIFY2(shell > 0, "the pipeline did not start");
        QVERIFY(group > 1 && group != ::getpgrp());
        QVERIFY2(before.count(shell) && before.count(sleeper), "the pipeline runs in its own process group");
        QVERIFY2(left.empty(), qPrintable(QStringLiteral("%1 process(es) of the pipeline still run 5 s after its parent was killed").arg(left.size())));
    }
};

QTEST_GUILESS_MAIN(TestChildProcess)
#include "test_child_process.moc"
