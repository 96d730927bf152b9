#pragma once
// Checks a command makes on where it will write, before it does any work: a wrong --out fails in
// a moment with the path and the reason, not after hours of training with "No such file or
// directory". Nothing is created. Each throws InputError "<option> <path>: <reason>", the path
// escaped (pathForMessage).
#include <string>

namespace tinyscope {

// Bytes of one path component (ext4, xfs, btrfs, tmpfs): the longest file or folder name.
inline constexpr std::size_t kNameMax = 255;

// A file name without a folder (e.g. --name): not empty, no '/', not "." or "..", no control
// characters, at most `maxBytes` bytes (room for the suffixes the command appends). User-given
// names are refused, never rewritten, so no name can lead outside --out.
void requireFileStem(const std::string& name, const std::string& option, std::size_t maxBytes = 200);

// `path` can be written by writeFileAtomic: replaceableFileTarget accepts it, and the folder of the
// file it names exists and is writable.
void requireWritableFile(const std::string& path, const std::string& option);

// The file writeFileAtomic replaces for `path`: `path` itself when it is missing or a regular file,
// or the regular file a symbolic link at `path` names (followed by the kernel, so
// fs.protected_symlinks applies). Decision: a link to a file is written through — the link stays,
// the file it names is replaced — as a shell's `>` writes through it. Anything else is refused,
// since the new file renamed over it would replace the node itself (`deploy --out /dev/null` as
// root replaced /dev/null): a folder, a device, a FIFO, a socket, a link to one of them or to
// nothing ("<option> <path>: is a FIFO (named pipe); the output can only replace a regular file").
std::string replaceableFileTarget(const std::string& path, const std::string& option = "");

// "a FIFO (named pipe)", "a character device", "a socket", "a folder", ... for the S_IFMT bits of `mode`.
std::string fileTypeText(unsigned mode);

// `path` as messages quote it: escapedForMessage, whole up to PATH_MAX bytes (any path the system
// can open), so a name with escape sequences or newlines shows as text and a huge one is cut.
std::string pathForMessage(const std::string& path);

// `dir` is a writable folder, or can be created (its nearest existing ancestor is a writable folder).
void requireWritableFolder(const std::string& dir, const std::string& option);

// Path pieces without touching the disk: "a/b/" -> "a/b"; parent "a" ("." for "b", "/" for "/b");
// last component "b".
std::string withoutTrailingSlashes(std::string path);
std::string parentFolderOf(const std::string& path);
std::string lastPathComponent(const std::string& path);

}  // namespace tinyscope
