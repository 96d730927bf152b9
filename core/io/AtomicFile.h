#pragma once
// Atomic file writes: the data goes to a temporary file in the same folder, is flushed,
// then renamed over the target, so readers see the old file or the new one, never a torn one.
#include <cstddef>
#include <string>

namespace tinyscope {

// Temporary name `path.tmp-<pid>-<n>`: unique per process and per call, so threads and
// processes writing the same target never share one. The folder is flushed after the rename.
void writeFileAtomic(const std::string& path, const std::string& bytes);

// Removes temporaries of `path` that a killed writer left ("path.tmp-<pid>[-<n>]" of a process
// no longer running on this machine). Errors are ignored.
void removeStaleTemporaries(const std::string& path);

// Creates `path` (which must not exist), writes and fsyncs it; on failure removes it again.
// Messages name `shownAs` (default: path), e.g. the final name of a file written in a staging folder.
void writeNewFile(const std::string& path, const std::string& bytes, const std::string& shownAs = "");

// fsync of a folder, so the names created or renamed in it survive a power cut. Returns errno (0 = ok).
int syncFolder(const std::string& dir);

// Reads a whole file; throws InputError naming the path if it cannot be read.
std::string readFileBytes(const std::string& path);
// The same, refusing a file (or a device such as /dev/zero) longer than `maxBytes`: the InputError
// says the file is larger than a `what` may be.
std::string readFileBytes(const std::string& path, std::size_t maxBytes, const std::string& what);

}  // namespace tinyscope
