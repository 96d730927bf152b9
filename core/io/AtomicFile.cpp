#include "io/AtomicFile.h"

#include "Error.h"
#include "io/OutputPaths.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <signal.h>
#include <vector>
#include <fcntl.h>
#include <fstream>
#include <sstream>
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

}  // namespace

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
    const std::string& shown = shownAs.empty() ? path : shownAs;
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
    static std::atomic<unsigned long> counter{0};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0; ++attempt) {
        tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        // EEXIST: a leftover of a dead process that had our pid; take the next number.
        if (fd < 0 && (errno != EEXIST || attempt > 1000)) throw InputError(path + ": cannot write: " + std::strerror(errno));
    }
    int err = writeAllAndSync(fd, bytes);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err != 0) {
        ::unlink(tmp.c_str());
        throw InputError(path + ": cannot write: " + std::strerror(err));
    }
    // The rename is what readers see; a failed flush of the folder only weakens durability
    // (after a power cut the old file or the new one is there, both complete).
    syncFolder(parentFolderOf(path));
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
        const std::string rest = n.substr(prefix.size());
        char* end = nullptr;
        const long pid = std::strtol(rest.c_str(), &end, 10);
        if (end == rest.c_str() || pid <= 0 || (*end != '\0' && *end != '-')) continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;   // its writer still runs
        stale.push_back(folder + "/" + n);
    }
    ::closedir(d);
    for (const std::string& p : stale) ::unlink(p.c_str());
}

std::string readFileBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw InputError(path + ": read error");
    return ss.str();
}

std::string readFileBytes(const std::string& path, std::size_t maxBytes, const std::string& what)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::string out;
    char buf[1 << 16];
    while (in) {
        in.read(buf, sizeof buf);
        out.append(buf, static_cast<std::size_t>(in.gcount()));
        if (out.size() > maxBytes)
            throw InputError(path + ": larger than the " + std::to_string(maxBytes) + " bytes a " + what + " may have");
    }
    if (in.bad())
        throw InputError(path + ": read error");
    return out;
}

}  // namespace tinyscope
