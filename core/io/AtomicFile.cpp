#include "io/AtomicFile.h"

#include "Error.h"
#include "io/OutputPaths.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <signal.h>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope {

namespace {

// Writes all of `bytes` to `fd` and fsyncs it; returns errno (0 = ok).
int writeAllAndSync(int fd, const std::string& bytes)
{
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return ::fsync(fd) == 0 ? 0 : errno;
}

bool isDigits(const std::string& text, std::size_t maxLength)
{
    return !text.empty() && text.size() <= maxLength && text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

bool processRunning(long pid)
{
    return pid > 0 && pid <= INT_MAX && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

int syncFolder(const std::string& dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    const int err = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    return err;
}

void writeNewFile(const std::string& path, const std::string& bytes, const std::string& shownAs)
{
    const std::string shown = pathForMessage(shownAs.empty() ? path : shownAs);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) throw InputError(shown + ": cannot write: " + std::strerror(errno));
    int err = writeAllAndSync(fd, bytes);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        ::unlink(path.c_str());
        throw InputError(shown + ": cannot write: " + std::strerror(err));
    }
}

void writeFileAtomic(const std::string& path, const std::string& bytes)
{
    // The same refusals as the commands' early check (requireWritableFile), in case a caller
    // skipped it: never rename over a device, FIFO or socket; a link to a file is written through.
    const std::string target = replaceableFileTarget(path);
    // A writer killed before its rename (kill -9, power cut) left its temporary; this run cleans up.
    removeStaleTemporaries(target);
    static std::atomic<unsigned long> counter{0};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0; ++attempt) {
        tmp = target + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        // EEXIST: a leftover of a dead process that had our pid; take the next number.
        if (fd < 0 && (errno != EEXIST || attempt > 1000)) throw InputError(pathForMessage(path) + ": cannot write: " + std::strerror(errno));
    }
    int err = writeAllAndSync(fd, bytes);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && std::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
    if (err != 0) {
        ::unlink(tmp.c_str());
        throw InputError(pathForMessage(path) + ": cannot write: " + std::strerror(err));
    }
    // The rename is what readers see; a failed flush of the folder only weakens durability
    // (after a power cut the old file or the new one is there, both complete).
    syncFolder(parentFolderOf(target));
}

void removeStaleTemporaries(const std::string& path)
{
    const std::string folder = parentFolderOf(path), prefix = lastPathComponent(path) + ".tmp-";
    DIR* d = ::opendir(folder.c_str());
    if (!d) return;
    std::vector<std::string> stale;
    while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n.compare(0, prefix.size(), prefix) != 0) continue;
        // Only the names writeFileAtomic gives: "<pid>" or "<pid>-<n>", digits.
        const std::string rest = n.substr(prefix.size());
        const auto dash = rest.find('-');
        const std::string pid = rest.substr(0, dash), number = dash == std::string::npos ? "0" : rest.substr(dash + 1);
        if (!isDigits(pid, 9) || !isDigits(number, 20) || processRunning(std::stol(pid))) continue;
        stale.push_back(folder + "/" + n);
    }
    ::closedir(d);
    for (const std::string& p : stale) ::unlink(p.c_str());
}

std::string byteSizeText(std::uint64_t bytes)
{
    char buf[48];
    if (bytes >= (std::uint64_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1 << 20));
    else if (bytes >= 100 * 1024) std::snprintf(buf, sizeof buf, "%.0f KB", static_cast<double>(bytes) / 1024);
    else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / 1024);
    else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
    return buf;
}

std::string readFileBytes(const std::string& path, std::uint64_t maxBytes, const std::string& what)
{
    const std::string shown = pathForMessage(path);
    // O_NONBLOCK so that opening a FIFO without a writer does not block; cleared below.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw InputError(shown + ": cannot open: " + std::strerror(errno));
    struct FdCloser {
        int fd;
        ~FdCloser() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw InputError(shown + ": cannot read: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError(shown + ": is a folder, expected a file");
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
        throw InputError(shown + ": not a regular file (a device or special file cannot be read as data)");
    const auto tooLarge = [&](std::uint64_t size, bool atLeast) {
        return InputError(shown + ": " + (atLeast ? "more than " : "") + byteSizeText(size) + ", more than the " +
                          byteSizeText(maxBytes) + (what.empty() ? " this reader accepts" : " a " + what + " may have"));
    };
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > maxBytes) throw tooLarge(static_cast<std::uint64_t>(st.st_size), false);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::string out;
    if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw InputError(shown + ": read error: " + std::strerror(errno));
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > maxBytes) throw tooLarge(out.size(), true);
    }
    return out;
}

}  // namespace tinyscope
