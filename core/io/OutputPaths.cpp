#include "io/OutputPaths.h"

#include "Error.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope {

namespace {

constexpr std::size_t kNameMax = 255;   // bytes of one path component (ext4, xfs, btrfs, tmpfs)
constexpr std::size_t kTempSuffix = 32; // ".tmp-<pid>-<n>" of writeFileAtomic

[[noreturn]] void fail(const std::string& option, const std::string& path, const std::string& reason)
{
    throw InputError((option.empty() ? path : option + " " + path) + ": " + reason);
}

// The folder `folder` (which must exist) lets us create files: a folder, writable and searchable.
void requireWritableExistingFolder(const std::string& folder, const std::string& option, const std::string& path)
{
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) fail(option, path, "cannot use the folder " + folder + ": " + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) fail(option, path, folder + " is not a folder");
    if (::access(folder.c_str(), W_OK | X_OK) != 0) fail(option, path, "cannot write into " + folder + ": " + std::strerror(errno));
}

}  // namespace

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
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail(option, path, "is a folder; expected a file");
    const std::string name = lastPathComponent(path);
    if (name == "." || name == "..") fail(option, path, "names a folder; expected a file");
    if (name.size() + kTempSuffix > kNameMax) fail(option, path, "the file name is too long (" + std::to_string(name.size()) + " bytes)");
    const std::string folder = parentFolderOf(path);
    struct stat fs {};
    if (::stat(folder.c_str(), &fs) != 0) {
        if (errno == ENOENT) fail(option, path, "the folder " + folder + " does not exist");
        fail(option, path, "cannot use the folder " + folder + ": " + std::strerror(errno));
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
        if (lastPathComponent(p).size() > kNameMax) fail(option, dirIn, "the name " + lastPathComponent(p).substr(0, 40) + "... is too long");
        const std::string up = parentFolderOf(p);
        if (up == p) break;
        p = up;
        if (::stat(p.c_str(), &st) == 0) {
            if (!S_ISDIR(st.st_mode)) fail(option, dirIn, "cannot create it: " + p + " is not a folder");
            if (::access(p.c_str(), W_OK | X_OK) != 0) fail(option, dirIn, "cannot create it in " + p + ": " + std::strerror(errno));
            return;
        }
        if (errno != ENOENT && errno != ENOTDIR) fail(option, dirIn, "cannot create it: " + p + ": " + std::strerror(errno));
    }
    fail(option, dirIn, "cannot create it: no existing folder above it");
}

}  // namespace tinyscope
