#pragma once
// Checks a command makes on where it will write, before it does any work: a wrong --out fails in
// a moment with the path and the reason, not after hours of training with "No such file or
// directory". Nothing is created. Each throws InputError "<option> <path>: <reason>".
#include <string>

namespace tinyscope {

// A file name without a folder (e.g. --name): not empty, no '/', not "." or "..", no control
// characters, at most `maxBytes` bytes (room for the suffixes the command appends). User-given
// names are refused, never rewritten, so no name can lead outside --out.
void requireFileStem(const std::string& name, const std::string& option, std::size_t maxBytes = 200);

// `path` can be written by writeFileAtomic: it is not a folder, and its folder exists and is writable.
void requireWritableFile(const std::string& path, const std::string& option);

// `dir` is a writable folder, or can be created (its nearest existing ancestor is a writable folder).
void requireWritableFolder(const std::string& dir, const std::string& option);

// Path pieces without touching the disk: "a/b/" -> "a/b"; parent "a" ("." for "b", "/" for "/b");
// last component "b".
std::string withoutTrailingSlashes(std::string path);
std::string parentFolderOf(const std::string& path);
std::string lastPathComponent(const std::string& path);

}  // namespace tinyscope
