#include "io/OutputPaths.h"

#include "Error.h"
#include "io/Text.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope {

namespace {

constexpr std::size_t kTempSuffix = 32; // ".tmp-<pid>-<n>" of writeFileAtomic
constexpr const char* kOnlyRegular = "; the output can only replace a regular file";

[[noreturn]] void fail(const std::string& option, const std::string& path, const std::string& reason)
{
    const std::string shown = pathForMessage(path);
    throw InputError((option.empty() ? shown : option + " " + shown) + ": " + reason);
}

// The folder `folder` (which must exist) lets us create files: a folder, writable and searchable.
void requireWritableExistingFolder(const std::string& folder, const std::string& option, const std::string& path)
{
    const std::string shown = pathForMessage(folder);
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) fail(option, path, "cannot use the folder " + shown + ": " + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) fail(option, path, shown + " is not a folder");
    if (::access(folder.c_str(), W_OK | X_OK) != 0) fail(option, path, "cannot write into " + shown + ": " + std::strerror(errno));
}

}  // namespace

std::string pathForMessage(const std::string& path) { return escapedForMessage(path, PATH_MAX); }

std::string fileTypeText(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFLNK: return "a symbolic link";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    default: return "a special file";
    }
}

std::string replaceableFileTarget(const std::string& path, const std::string& option)
{
    struct stat st {};
    // Missing or unreachable: a new file (the write itself says why it cannot be made).
    if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return path;
    if (S_ISDIR(st.st_mode)) fail(option, path, "is a folder; expected a file");
    if (!S_ISLNK(st.st_mode)) fail(option, path, "is " + fileTypeText(st.st_mode) + kOnlyRegular);
    // O_PATH opens no device and no FIFO: it only resolves the link, as the kernel would for a write.
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        char text[PATH_MAX];
        const ssize_t n = ::readlink(path.c_str(), text, sizeof text);
        if (err == ENOENT)
            fail(option, path, "is a symbolic link to a missing file (" + pathForMessage(std::string(text, n > 0 ? static_cast<std::size_t>(n) : 0)) + ")" +
                                   kOnlyRegular);
        fail(option, path, "is a symbolic link that cannot be followed: " + std::string(std::strerror(err)));
    }
    struct stat target {};
    const int statErr = ::fstat(fd, &target) == 0 ? 0 : errno;
    ::close(fd);
    if (statErr != 0) fail(option, path, "is a symbolic link that cannot be followed: " + std::string(std::strerror(statErr)));
    if (S_ISDIR(target.st_mode)) fail(option, path, "is a folder; expected a file");
    if (!S_ISREG(target.st_mode)) fail(option, path, "is a symbolic link to " + fileTypeText(target.st_mode) + kOnlyRegular);
    // The path of the file the kernel reached, checked to be that file (the link may change meanwhile).
    char real[PATH_MAX];
    struct stat again {};
    if (!::realpath(path.c_str(), real) || ::stat(real, &again) != 0 || again.st_dev != target.st_dev || again.st_ino != target.st_ino)
        fail(option, path, "is a symbolic link that changed while it was followed");
    return real;
}

std::string withoutTrailingSlashes(std::string p)
{
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

std::string parentFolderOf(const std::string& p)
{
    const auto slash = p.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : p.substr(0, slash);
}

std::string lastPathComponent(const std::string& p)
{
    const auto slash = p.find_last_of('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

void requireFileStem(const std::string& name, const std::string& option, std::size_t maxBytes)
{
    if (name.empty()) fail(option, "''", "expected a file name, got an empty one");
    if (name == "." || name == "..") fail(option, name, "expected a file name, not a folder");
    if (name.find('/') != std::string::npos) fail(option, name, "expected a file name without '/' (the folder is given by --out)");
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f) fail(option, name, "a file name without control characters");
    if (name.size() > maxBytes)
        fail(option, name.substr(0, 40) + "...", "a file name of at most " + std::to_string(maxBytes) + " bytes, got " + std::to_string(name.size()));
}

void requireWritableFile(const std::string& path, const std::string& option)
{
    if (path.empty()) fail(option, "''", "expected a file name, got an empty one");
    if (path.back() == '/') fail(option, path, "names a folder; expected a file");
    // The temporary goes beside the file that is replaced: the one a link names, when it is a link.
    const std::string target = replaceableFileTarget(path, option);
    const std::string name = lastPathComponent(target);
    if (name == "." || name == "..") fail(option, path, "names a folder; expected a file");
    if (name.size() + kTempSuffix > kNameMax) fail(option, path, "the file name is too long (" + std::to_string(name.size()) + " bytes)");
    const std::string folder = parentFolderOf(target);
    struct stat fs {};
    if (::stat(folder.c_str(), &fs) != 0) {
        if (errno == ENOENT) fail(option, path, "the folder " + pathForMessage(folder) + " does not exist");
        fail(option, path, "cannot use the folder " + pathForMessage(folder) + ": " + std::strerror(errno));
    }
    requireWritableExistingFolder(folder, option, path);
}

void requireWritableFolder(const std::string& dirIn, const std::string& option)
{
    if (dirIn.empty()) fail(option, "''", "expected a folder, got an empty path");
    const std::string dir = withoutTrailingSlashes(dirIn);
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) fail(option, dirIn, "exists and is not a folder");
        if (::access(dir.c_str(), W_OK | X_OK) != 0) fail(option, dirIn, "cannot write into this folder: " + std::string(std::strerror(errno)));
        return;
    }
    if (errno != ENOENT && errno != ENOTDIR) fail(option, dirIn, std::strerror(errno));
    // Missing: every missing component is created, below the nearest existing ancestor.
    std::string p = dir;
    for (;;) {
        if (lastPathComponent(p).size() > kNameMax) fail(option, dirIn, "the name " + pathForMessage(lastPathComponent(p).substr(0, 40)) + "... is too long");
        const std::string up = parentFolderOf(p);
        if (up == p) break;
        p = up;
        if (::stat(p.c_str(), &st) == 0) {
            if (!S_ISDIR(st.st_mode)) fail(option, dirIn, "cannot create it: " + pathForMessage(p) + " is not a folder");
            if (::access(p.c_str(), W_OK | X_OK) != 0) fail(option, dirIn, "cannot create it in " + pathForMessage(p) + ": " + std::strerror(errno));
            return;
        }
        if (errno != ENOENT && errno != ENOTDIR) fail(option, dirIn, "cannot create it: " + pathForMessage(p) + ": " + std::strerror(errno));
    }
    fail(option, dirIn, "cannot create it: no existing folder above it");
}

}  // namespace tinyscope
