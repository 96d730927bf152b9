#include "io/DataPaths.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TINYSCOPE_SOURCE_DIR
#define TINYSCOPE_SOURCE_DIR ""
#endif

namespace tinyscope {

namespace {
std::string g_exeDir;

std::string exeDir()
{
    if (!g_exeDir.empty()) return g_exeDir;
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    std::string p(buf, static_cast<std::size_t>(n));
    auto slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
}

void mkdirs(const std::string& p)
{
    for (std::size_t i = 1; i <= p.size(); ++i)
        if (i == p.size() || p[i] == '/') ::mkdir(p.substr(0, i).c_str(), 0755);
}
}  // namespace

bool isDirectory(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool fileExists(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

void setExecutablePath(const std::string& argv0)
{
    auto slash = argv0.rfind('/');
    if (slash != std::string::npos) {
        char buf[PATH_MAX];
        if (::realpath(argv0.substr(0, slash).c_str(), buf)) g_exeDir = buf;
    }
}

std::string executableDir() { return exeDir(); }

std::string dataRoot()
{
    if (const char* env = std::getenv("TINYSCOPE_DATA"); env && *env && isDirectory(std::string(env) + "/models"))
        return env;
    std::string exe = exeDir();
    for (const char* rel : {"/..", "/../share/tinyscope", "/../.."}) {
        std::string cand = exe + rel;
        // Shown to users (cards, the Predictor panel): without the "/../.." of the search.
        if (!exe.empty() && isDirectory(cand + "/models/spaces")) return std::filesystem::weakly_canonical(cand).string();
    }
    std::string src = TINYSCOPE_SOURCE_DIR;
    if (!src.empty() && isDirectory(src + "/models")) return src;
    return "";
}

std::string findModelFile(const std::string& relative)
{
    std::string root = dataRoot();
    if (root.empty()) return "";
    std::string p = root + "/models/" + relative;
    return fileExists(p) ? p : "";
}

std::string userStateDir()
{
    std::string base;
    if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) base = x;
    else if (const char* h = std::getenv("HOME"); h && *h) base = std::string(h) + "/.local/state";
    else base = "/tmp";
    std::string dir = base + "/tinyscope";
    mkdirs(dir);
    return dir;
}

}  // namespace tinyscope
