#include "io/ChildProcess.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/OutputPaths.h"
#include "io/Text.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sstream>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace tinyscope {

namespace {

// Between fork and exec only async-signal-safe calls: the workbench has other threads (Qt,
// LibTorch), whose locks the child's copy may hold.

// In a child just forked: get `signal` when the thread that forked it (`parent`'s) ends — the whole
// workbench killed, kill -9 included. Checked once more afterwards: the parent may have died before.
void dieWithParent(pid_t parent, int signal)
{
    ::prctl(PR_SET_PDEATHSIG, signal);
    if (::getppid() != parent) ::raise(signal);
}

// The signal a pipeline's supervisor gets when the workbench dies; its handler kills the group.
constexpr int kWorkbenchDied = SIGTERM;

extern "C" void killOwnProcessGroup(int) { ::kill(0, SIGKILL); }

// Closes every descriptor above stderr: the workbench's locks, pipes and files must not live on in
// a child that does not exec (close_range, Linux 5.9; else one close per possible descriptor).
void closeDescriptorsAboveStderr()
{
    if (::close_range(3, ~0U, 0) == 0) return;
    rlimit rl {};
    const rlim_t limit = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? std::min<rlim_t>(rl.rlim_cur, 65536) : 65536;
    for (int fd = 3; fd < static_cast<int>(limit); ++fd) ::close(fd);
}

// The child of runProcessGroup. PR_SET_PDEATHSIG reaches only a direct child, and a pipeline's
// script starts children of its own (QEMU, the compilers), so the direct child is this supervisor:
// it leads the pipeline's process group, runs the program as its own child and passes on its exit
// code (128 + signal when a signal ended it); when the workbench dies, it kills the whole group.
// The workbench's own kills (cancel, hang, the end of the run) still go to the group, as before.
// PR_SET_PDEATHSIG follows the thread that forked, and runProcessGroup blocks in that thread until
// the supervisor has ended, so it fires exactly when the workbench dies mid-run.
[[noreturn]] void superviseProcessGroup(pid_t workbench, int logFd, char* const argv[], char* const envp[], const char* cwd)
{
    ::setpgid(0, 0);
    struct sigaction sa {};
    sa.sa_handler = killOwnProcessGroup;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(kWorkbenchDied, &sa, nullptr);
    sigset_t died;
    ::sigemptyset(&died);
    ::sigaddset(&died, kWorkbenchDied);
    ::sigprocmask(SIG_UNBLOCK, &died, nullptr);
    dieWithParent(workbench, kWorkbenchDied);
    ::dup2(logFd, 1);
    ::dup2(logFd, 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    closeDescriptorsAboveStderr();
    if (cwd && ::chdir(cwd) != 0) ::_exit(127);
    const pid_t program = ::fork();
    if (program == 0) {
        ::execve(argv[0], argv, envp);   // handlers are reset to the default by the exec
        ::_exit(127);
    }
    int status = 0;
    while (program > 0 && ::waitpid(program, &status, 0) < 0)
        if (errno != EINTR) ::_exit(127);
    ::_exit(program < 0 ? 127 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

}  // namespace

bool onPath(const std::string& exe)
{
    const char* path = std::getenv("PATH");
    if (!path) return false;
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) dir = ".";
        const std::string p = dir + "/" + exe;
        if (::access(p.c_str(), X_OK) == 0) return true;
    }
    return false;
}

// Runs argv (PATH lookup) with stdout captured into `out` (stderr discarded); returns the exit code,
// -1 if it could not run.
int runCapture(const std::vector<std::string>& argv, std::string* out)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -1;   // no other child inherits it (it would hold the pipe open)
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dieWithParent(parent, SIGKILL);
        ::dup2(fds[1], 1);
        const int devnull = ::open("/dev/null", O_WRONLY);
        if (devnull >= 0) ::dup2(devnull, 2);
        ::close(fds[0]);
        ::close(fds[1]);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(fds[1]);
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n > 0) {
            if (out && out->size() < (1u << 20)) out->append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string lastLine(const std::string& text)
{
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string lastLineAfter(const std::string& text, const std::string& prefix)
{
    std::istringstream in(text);
    std::string line, found;
    while (std::getline(in, line))
        if (line.rfind(prefix, 0) == 0) found = line.substr(prefix.size());
    return found;
}

std::string missingPythonPackage(const std::vector<std::pair<std::string, std::string>>& modules)
{
    if (::access("/usr/bin/python3", X_OK) != 0) return "python3";
    std::string all = "import ";
    for (std::size_t i = 0; i < modules.size(); ++i) all += (i ? ", " : "") + modules[i].first;
    if (modules.empty() || runCapture({"/usr/bin/python3", "-c", all}, nullptr) == 0) return "";
    for (const auto& [mod, pkg] : modules)
        if (runCapture({"/usr/bin/python3", "-c", "import " + mod}, nullptr) != 0) return pkg;
    return "";
}

TemporaryFolder::TemporaryFolder(const std::string& stem)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + stem + "-XXXXXX";
    if (!::mkdtemp(templ.data())) throw InputError("cannot create a temporary folder under '" + pathForMessage(templ) + "': " + std::strerror(errno));
    path_ = templ;
}

TemporaryFolder::~TemporaryFolder()
{
    if (keep || path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

int runProcessGroup(const ProcessGroupRun& run, const JobControl& job)
{
    std::vector<std::string> argvS = run.argv;
    if (argvS.empty()) throw InputError("no program to run");
    const std::vector<std::string>& extraEnv = run.extra_env;
    const std::string& logPath = run.log_path;
    const double timeout_s = run.timeout_s;
    std::vector<char*> argv;
    for (std::string& a : argvS) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> envS;
    for (char** e = environ; e && *e; ++e) {
        const std::string kv = *e;
        const std::string key = kv.substr(0, kv.find('='));
        bool overridden = false;
        for (const std::string& x : extraEnv) overridden = overridden || x.compare(0, key.size() + 1, key + "=") == 0;
        if (!overridden) envS.push_back(kv);
    }
    envS.insert(envS.end(), extraEnv.begin(), extraEnv.end());
    std::vector<char*> envp;
    for (std::string& a : envS) envp.push_back(a.data());
    envp.push_back(nullptr);

    const int logFd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logFd < 0) throw InputError("cannot write '" + pathForMessage(logPath) + "': " + std::strerror(errno));
    const pid_t workbench = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(logFd);
        throw InputError("cannot start " + run.what + ": " + std::strerror(errno));
    }
    if (pid == 0) superviseProcessGroup(workbench, logFd, argv.data(), envp.data(), run.cwd.empty() ? nullptr : run.cwd.c_str());
    ::close(logFd);
    ::setpgid(pid, pid);   // also from the parent, so the group exists before any kill
    const auto start = std::chrono::steady_clock::now();
    auto killGroup = [&] {
        ::kill(-pid, SIGKILL);
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    };
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            ::kill(-pid, SIGKILL);   // nothing of the group outlives the script (e.g. a QEMU it started)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
        if (job.cancelled()) {
            killGroup();
            throw CancelledError();
        }
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > timeout_s) {
            killGroup();
            std::string log;
            try {
                log = readFileBytes(logPath, 64u << 20);
            } catch (const std::exception&) {
            }
            throw InputError(run.what + " did not finish within " + std::to_string(static_cast<long long>(timeout_s)) +
                             " s (hang), killed; last output: " + (lastLine(log).empty() ? "(none)" : escapedForMessage(lastLine(log), 300)));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

}  // namespace tinyscope
