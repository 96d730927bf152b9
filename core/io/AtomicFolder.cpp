#include "io/AtomicFolder.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/OutputPaths.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <set>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope {

namespace {

constexpr const char* kStaging = ".tinyscope-staging-";   // ".<dir>" + this + "<pid>-<random>"
constexpr const char* kOld = ".tinyscope-old-";           // the old folder between two renames (no RENAME_EXCHANGE)
constexpr std::size_t kSuffixRoom = 48;                   // what the staging name adds to the folder's name

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }
    bool ok() const { return fd_ >= 0; }

private:
    int fd_;
};

std::string errnoText(int e) { return std::strerror(e); }

struct Entry {
    std::string name;
    mode_t type = 0;   // S_IFMT bits
};

// The entries of the folder `fd` (without "." and ".."), types from lstat.
std::vector<Entry> listFolder(int fd)
{
    std::vector<Entry> out;
    const int dup = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup < 0) return out;
    DIR* d = ::fdopendir(dup);
    if (!d) {
        ::close(dup);
        return out;
    }
    while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        struct stat st {};
        if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;   // gone meanwhile
        out.push_back({n, static_cast<mode_t>(st.st_mode & S_IFMT)});
    }
    ::closedir(d);
    return out;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Leftovers of the per-file staging of earlier versions: ".X.partial" and ".X.partial.tmp-<pid>[-<n>]".
bool isEarlierLeftover(const std::string& n)
{
    if (n.size() < 10 || n[0] != '.') return false;
    const auto p = n.rfind(".partial");
    if (p == std::string::npos || p < 2) return false;
    const std::string rest = n.substr(p + 8);
    if (rest.empty()) return true;
    if (!startsWith(rest, ".tmp-") || rest.size() == 5) return false;
    for (char c : rest.substr(5))
        if (!(c == '-' || (c >= '0' && c <= '9'))) return false;
    return true;
}

struct Location {
    std::string parent;   // real (symlinks resolved) parent folder
    std::string base;     // the folder's name in it
    bool exists = false;
    struct stat st {};
    std::string path() const { return (parent == "/" ? "" : parent) + "/" + base; }
};

[[noreturn]] void refuse(const std::string& option, const std::string& dir, const std::string& reason)
{
    const std::string shown = pathForMessage(dir);
    throw InputError((option.empty() ? shown : option + " " + shown) + ": " + reason);
}

// Where the folder really is: a symlink to a folder is followed, so the folder it names is replaced.
Location locate(const std::string& dir, const std::string& option)
{
    Location w;
    const std::string d = withoutTrailingSlashes(dir);
    char buf[PATH_MAX];
    if (::stat(d.c_str(), &w.st) == 0) {
        if (!S_ISDIR(w.st.st_mode)) refuse(option, dir, "exists and is not a folder");
        if (!::realpath(d.c_str(), buf)) refuse(option, dir, errnoText(errno));
        const std::string real = buf;
        if (real == "/") refuse(option, dir, "the root folder cannot be replaced");
        w.parent = parentFolderOf(real);
        w.base = lastPathComponent(real);
        w.exists = true;
        return w;
    }
    if (errno != ENOENT) refuse(option, dir, errnoText(errno));
    w.base = lastPathComponent(d);
    if (w.base == "." || w.base == "..") refuse(option, dir, "cannot be resolved");
    if (!::realpath(parentFolderOf(d).c_str(), buf)) refuse(option, dir, "cannot use its folder " + pathForMessage(parentFolderOf(d)) + ": " + errnoText(errno));
    w.parent = buf;
    return w;
}

// The checks of an existing folder that the swap depends on. An entry named like one of `names`
// (the files being written) must be a regular file or a link: the new folder drops the old entry,
// which must not be a device, FIFO or socket (OutputPaths.h: replaceableFileTarget).
void checkExisting(const Location& w, const std::string& option, const std::string& dir, const std::set<std::string>& names = {})
{
    if (w.base.size() + kSuffixRoom > kNameMax) refuse(option, dir, "the folder's name is too long (" + std::to_string(w.base.size()) + " bytes)");
    if (::access(w.path().c_str(), W_OK | X_OK) != 0) refuse(option, dir, "cannot write into this folder: " + errnoText(errno));
    if (::access(w.parent.c_str(), W_OK | X_OK) != 0)
        refuse(option, dir, "the files are swapped in through the parent folder " + pathForMessage(w.parent) + ", which cannot be written: " + errnoText(errno));
    struct stat ps {};
    if (::stat(w.parent.c_str(), &ps) != 0) refuse(option, dir, "cannot use its parent folder " + pathForMessage(w.parent) + ": " + errnoText(errno));
    if (ps.st_dev != w.st.st_dev) refuse(option, dir, "is a mount point; the files are swapped in as a whole new folder, so give a folder inside it");
    struct stat cwd {};
    if (::stat(".", &cwd) == 0 && cwd.st_dev == w.st.st_dev && cwd.st_ino == w.st.st_ino)
        refuse(option, dir, "is the current folder; the files are swapped in as a whole new folder, which a shell inside the old one "
                            "would not see: give another folder (e.g. a new sub-folder)");
    Fd fd(::open(w.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.ok()) refuse(option, dir, "cannot read the folder: " + errnoText(errno));
    for (const Entry& e : listFolder(fd.get())) {
        if (e.type == S_IFDIR)
            refuse(option, dir, "holds the folder '" + pathForMessage(e.name) + "'; the files are swapped in as a whole new folder, so this folder "
                                "may hold files only (docs/TINYENGINE_EXPORT.md)");
        if (names.count(e.name) && e.type != S_IFREG && e.type != S_IFLNK)
            refuse(option, withoutTrailingSlashes(dir) + "/" + e.name, "is " + fileTypeText(e.type) + "; the output can only replace a regular file");
    }
}

// `fd` locked exclusively; errno on failure (NFS without flock on folders: ENOLCK, EBADF, …).
int lockFolder(int fd)
{
    while (::flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) return errno;
    return 0;
}

// "<pid>-..." after `prefix` names a process still running on this machine.
bool writerAlive(const std::string& name, const std::string& prefix)
{
    const std::string rest = name.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    return end != rest.c_str() && processRunning(pid);
}

void removeQuietly(const Location& w, const std::string& name)
{
    std::error_code ec;
    std::filesystem::remove_all(w.parent + "/" + name, ec);
}

// Under the lock every staging folder of `w` is a dead writer's: before its swap it holds an
// unfinished new set, after it the old folder. Both go. An old folder without the folder itself
// (killed between the two renames of the fallback) is put back first.
void removeStaleWriters(int parentFd, const Location& w, bool locked)
{
    const std::string staging = "." + w.base + kStaging, old = "." + w.base + kOld;
    std::vector<std::string> stale, olds;
    for (const Entry& e : listFolder(parentFd)) {
        const bool isStaging = startsWith(e.name, staging), isOld = startsWith(e.name, old);
        if (!isStaging && !isOld) continue;
        if (!locked && writerAlive(e.name, isStaging ? staging : old)) continue;
        (isOld ? olds : stale).push_back(e.name);
    }
    struct stat st {};
    if (!olds.empty() && ::fstatat(parentFd, w.base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
        if (::renameat(parentFd, olds.front().c_str(), parentFd, w.base.c_str()) == 0) {
            ::fsync(parentFd);
            olds.erase(olds.begin());
        }
    }
    for (const std::string& n : stale) removeQuietly(w, n);
    for (const std::string& n : olds) removeQuietly(w, n);
}

// Gives `to` (a folder fd) the entry `name` of `from`: a hard link, or a copy where the
// filesystem refuses links (protected_hardlinks, no link support).
void carryOver(int from, int to, const Entry& e, const std::string& shown)
{
    if (::linkat(from, e.name.c_str(), to, e.name.c_str(), 0) == 0) return;
    const int linkErr = errno;
    if (linkErr != EPERM && linkErr != EMLINK && linkErr != EXDEV && linkErr != ENOTSUP && linkErr != EOPNOTSUPP)
        throw InputError(shown + ": cannot carry it over into the new folder: " + errnoText(linkErr));
    struct stat st {};
    if (::fstatat(from, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw InputError(shown + ": " + errnoText(errno));
    if (S_ISLNK(st.st_mode)) {
        std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
        const ssize_t n = ::readlinkat(from, e.name.c_str(), target.data(), target.size());
        if (n < 0 || ::symlinkat(target.substr(0, static_cast<std::size_t>(n)).c_str(), to, e.name.c_str()) != 0)
            throw InputError(shown + ": cannot carry it over into the new folder: " + errnoText(errno));
        return;
    }
    if (!S_ISREG(st.st_mode))
        throw InputError(shown + ": cannot carry over a special file (link: " + errnoText(linkErr) + ")");
    Fd in(::openat(from, e.name.c_str(), O_RDONLY | O_CLOEXEC));
    Fd out(::openat(to, e.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777));
    if (!in.ok() || !out.ok()) throw InputError(shown + ": cannot copy it into the new folder: " + errnoText(errno));
    char buf[1 << 16];
    for (;;) {
        ssize_t n = ::read(in.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw InputError(shown + ": cannot copy it into the new folder: " + errnoText(errno));
        if (n == 0) break;
        for (ssize_t off = 0; off < n;) {
            const ssize_t m = ::write(out.get(), buf + off, static_cast<std::size_t>(n - off));
            if (m < 0 && errno == EINTR) continue;
            if (m < 0) throw InputError(shown + ": cannot copy it into the new folder: " + errnoText(errno));
            off += m;
        }
    }
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    ::futimens(out.get(), times);
    if (::fsync(out.get()) != 0) throw InputError(shown + ": cannot copy it into the new folder: " + errnoText(errno));
}

// After the swap: entries that appeared in the old folder while we worked (another program
// writing into it) move to the new one, unless a file of that name is there.
void keepLateArrivals(int parentFd, const std::string& oldName, const std::string& base)
{
    Fd oldFd(::openat(parentFd, oldName.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    Fd newFd(::openat(parentFd, base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!oldFd.ok() || !newFd.ok()) return;
    for (const Entry& e : listFolder(oldFd.get())) {
        if (isEarlierLeftover(e.name)) continue;
        struct stat st {};
        if (::fstatat(newFd.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) continue;
        ::renameat2(oldFd.get(), e.name.c_str(), newFd.get(), e.name.c_str(), RENAME_NOREPLACE);
    }
}

std::string randomTag()
{
    std::random_device rd;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld-%08x", static_cast<long>(::getpid()), static_cast<unsigned>(rd()));
    return buf;
}

}  // namespace

void requireReplaceableFolder(const std::string& dir, const std::string& option)
{
    struct stat st {};
    if (dir.empty()) refuse(option, "''", "expected a folder, got an empty path");
    if (::stat(withoutTrailingSlashes(dir).c_str(), &st) != 0 && errno == ENOENT) {
        requireWritableFolder(dir, option);
        if (lastPathComponent(withoutTrailingSlashes(dir)).size() + kSuffixRoom > kNameMax) refuse(option, dir, "the folder's name is too long");
        return;
    }
    const Location w = locate(dir, option);
    checkExisting(w, option, dir);
}

void replaceFilesInFolder(const std::string& dir, const std::vector<NamedFile>& files, const JobControl& job)
{
    for (const NamedFile& f : files) requireFileStem(f.name, "file", kNameMax - 1);
    requireReplaceableFolder(dir);
    {
        // Missing parents are created; the folder itself appears with the swap.
        const std::string d = withoutTrailingSlashes(dir);
        struct stat st {};
        if (::stat(d.c_str(), &st) != 0) {
            std::error_code ec;
            std::filesystem::create_directories(parentFolderOf(d), ec);
            if (ec) throw InputError(pathForMessage(dir) + ": cannot create the folders above it: " + ec.message());
        }
    }
    const std::string shown = pathForMessage(dir);
    Location w = locate(dir, "");
    Fd parent(::open(w.parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent.ok()) throw InputError(shown + ": cannot open its parent folder " + pathForMessage(w.parent) + ": " + errnoText(errno));
    // Exports into one parent folder take turns; without the lock (a filesystem that refuses
    // flock on folders) only staging folders of processes no longer running are removed.
    const bool locked = lockFolder(parent.get()) == 0;
    removeStaleWriters(parent.get(), w, locked);
    w = locate(dir, "");
    std::set<std::string> names;
    for (const NamedFile& f : files) names.insert(f.name);
    if (w.exists) checkExisting(w, "", dir, names);

    const std::string tag = randomTag();
    const std::string staging = "." + w.base + kStaging + tag;
    if (::mkdirat(parent.get(), staging.c_str(), 0777) != 0)
        throw InputError(shown + ": cannot create the staging folder " + pathForMessage(w.parent + "/" + staging) + ": " + errnoText(errno) + " (nothing was changed)");
    std::string oldName;   // where the old folder is after the swap
    try {
        Fd stage(::openat(parent.get(), staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!stage.ok()) throw InputError(shown + ": cannot open the staging folder: " + errnoText(errno));
        const std::string shownDir = withoutTrailingSlashes(dir);
        for (const NamedFile& f : files) {
            writeNewFile(w.parent + "/" + staging + "/" + f.name, f.bytes, shownDir + "/" + f.name);
            job.check();
        }
        if (w.exists) {
            Fd old(::openat(parent.get(), w.base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            if (!old.ok()) throw InputError(shown + ": cannot read the folder: " + errnoText(errno));
            for (const Entry& e : listFolder(old.get())) {
                if (names.count(e.name) || isEarlierLeftover(e.name)) continue;
                if (e.type == S_IFDIR) throw InputError(shown + ": a folder '" + pathForMessage(e.name) + "' appeared in it while writing");
                carryOver(old.get(), stage.get(), e, pathForMessage(shownDir + "/" + e.name));
            }
            ::fchmod(stage.get(), w.st.st_mode & 07777);
            if (::geteuid() == 0) (void)!::fchown(stage.get(), w.st.st_uid, w.st.st_gid);
        }
        if (::fsync(stage.get()) != 0) throw InputError(shown + ": cannot write the staging folder: " + errnoText(errno));
        job.check();
        // The commit: one rename. Before it the folder is the old one, after it the new one.
        if (!w.exists) {
            if (::renameat(parent.get(), staging.c_str(), parent.get(), w.base.c_str()) != 0)
                throw InputError(shown + ": cannot create the folder: " + errnoText(errno));
        } else if (::renameat2(parent.get(), staging.c_str(), parent.get(), w.base.c_str(), RENAME_EXCHANGE) == 0) {
            oldName = staging;
        } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP || errno == EOPNOTSUPP) {
            // A filesystem without RENAME_EXCHANGE: two renames. Killed between them, the folder
            // is missing and its old version waits under ".<dir>.tinyscope-old-…"; the next
            // writer puts it back (removeStaleWriters).
            const std::string old = "." + w.base + kOld + tag;
            if (::renameat(parent.get(), w.base.c_str(), parent.get(), old.c_str()) != 0)
                throw InputError(shown + ": cannot replace the folder: " + errnoText(errno));
            if (::renameat(parent.get(), staging.c_str(), parent.get(), w.base.c_str()) != 0) {
                const int err = errno;
                if (::renameat(parent.get(), old.c_str(), parent.get(), w.base.c_str()) != 0)
                    throw InputError(shown + ": cannot replace the folder: " + errnoText(err) + "; the earlier files are in " +
                                     pathForMessage(w.parent + "/" + old) + " (the next export puts them back)");
                throw InputError(shown + ": cannot replace the folder: " + errnoText(err));
            }
            oldName = old;
        } else {
            throw InputError(shown + ": cannot replace the folder: " + errnoText(errno));
        }
    } catch (const InputError& e) {
        removeQuietly(w, staging);
        throw InputError(std::string(e.what()) + " (" + pathForMessage(withoutTrailingSlashes(dir)) + " is unchanged)");
    } catch (...) {
        removeQuietly(w, staging);
        throw;
    }
    // Past the commit nothing is an error: either version survives a power cut complete, and an
    // old folder left behind is removed by the next writer.
    ::fsync(parent.get());
    if (!oldName.empty()) {
        keepLateArrivals(parent.get(), oldName, w.base);
        removeQuietly(w, oldName);
    }
}

}  // namespace tinyscope
