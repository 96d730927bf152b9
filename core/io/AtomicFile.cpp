#include "io/AtomicFile.h"

#include "Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope {

void writeFileAtomic(const std::string& path, const std::string& bytes)
{
    std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw InputError(path + ": cannot write: " + std::strerror(errno));
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            throw InputError(path + ": cannot write: " + std::strerror(err));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        throw InputError(path + ": cannot write: " + std::strerror(err));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        throw InputError(path + ": cannot write: " + std::strerror(err));
    }
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
    // O_NONBLOCK so that opening a FIFO without a writer does not block; cleared below.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    struct FdCloser {
        int fd;
        ~FdCloser() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a folder, expected a file");
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
        throw InputError(path + ": not a regular file (a device or special file cannot be read as data)");
    const auto tooLarge = [&](std::uint64_t size, bool atLeast) {
        return InputError(path + ": " + (atLeast ? "more than " : "") + byteSizeText(size) + ", more than the " +
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
            throw InputError(path + ": read error: " + std::strerror(errno));
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > maxBytes) throw tooLarge(out.size(), true);
    }
    return out;
}

}  // namespace tinyscope
