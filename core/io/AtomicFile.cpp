#include "io/AtomicFile.h"

#include "Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
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
