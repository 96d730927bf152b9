#pragma once
// A set of files put into a folder all or nothing, for sets that only make sense together (a
// TinyEngine export: graph, params and scales). The folder is the unit: the new set is written
// into a fresh staging folder beside it (".<dir>.tinyscope-staging-<pid>-<random>"), the folder's
// other files are carried over (hard links, copies where links fail), and the staging folder takes
// the folder's place in one rename (renameat2 RENAME_EXCHANGE), so at every instant — also after
// a kill -9 or a power cut — the folder holds the complete old set or the complete new one.
// Writers into the same parent folder serialise on an flock of the parent; a staging folder found
// while holding it belongs to a dead writer and is removed. Rules and limits: docs/TINYENGINE_EXPORT.md.
#include "JobControl.h"

#include <string>
#include <vector>

namespace tinyscope {

struct NamedFile {
    std::string name;    // a plain file name inside the folder
    std::string bytes;
};

// Throws InputError "<option> <dir>: <reason>" if replaceFilesInFolder would refuse `dir`: an
// existing non-folder, a folder holding sub-folders, the current folder, a mount point, a folder
// (or its parent) we cannot write, or a missing folder whose nearest existing ancestor is not a
// writable folder. Creates nothing; meant for commands to call before their work.
void requireReplaceableFolder(const std::string& dir, const std::string& option = "");

// Puts `files` into `dir` (created with its parents if missing), replacing files of the same
// names and keeping every other file. On failure `dir` is untouched and the staging folder is
// removed; the message names the file and the reason. Failures after the swap (removing the old
// folder) are not errors: the next writer removes what is left.
void replaceFilesInFolder(const std::string& dir, const std::vector<NamedFile>& files, const JobControl& job = {});

}  // namespace tinyscope
