#pragma once
// Where Tinyscope finds its shipped artefacts (models/: predictors, demo supernet) and the
// user's settings: $TINYSCOPE_DATA, then next to the executable, then the source tree.
#include <string>

namespace tinyscope {

// Folder holding models/ (the repository root in a build tree). Empty if none was found.
std::string dataRoot();
// dataRoot() + "/models/" + relative, or "" if it does not exist.
std::string findModelFile(const std::string& relative);
// Per-user state folder ($XDG_STATE_HOME/tinyscope or ~/.local/state/tinyscope), created on demand.
std::string userStateDir();
bool fileExists(const std::string& path);
bool isDirectory(const std::string& path);
// Remembers argv[0]'s folder for the executable-relative lookup.
void setExecutablePath(const std::string& argv0);
// The running program's folder (argv[0]'s, else /proc/self/exe's); "" if unknown.
std::string executableDir();

}  // namespace tinyscope
