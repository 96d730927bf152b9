#pragma once
// Atomic file writes: the data goes to a temporary file in the same folder, is flushed,
// then renamed over the target, so readers see the old file or the new one, never a torn one.
// Bounded reads: every reader says how much it is prepared to take.
#include <cstdint>
#include <string>

namespace tinyscope {

// Temporary name `path.tmp-<pid>-<n>`: unique per process and per call, so threads and
// processes writing the same target never share one. The folder is flushed after the rename.
// Refuses what replaceableFileTarget refuses (a device, FIFO, socket or folder at `path`); a
// symbolic link to a file is written through. Removes the target's stale temporaries first.
void writeFileAtomic(const std::string& path, const std::string& bytes);

// Removes temporaries of `path` that a killed writer left ("path.tmp-<pid>[-<n>]" of a process
// no longer running on this machine). Errors are ignored.
void removeStaleTemporaries(const std::string& path);

// Is process `pid` running on this machine? (Its leftovers are kept; EPERM counts as running.)
bool processRunning(long pid);

// Creates `path` (which must not exist), writes and fsyncs it; on failure removes it again.
// Messages name `shownAs` (default: path), e.g. the final name of a file written in a staging folder.
void writeNewFile(const std::string& path, const std::string& bytes, const std::string& shownAs = "");

// fsync of a folder, so the names created or renamed in it survive a power cut. Returns errno (0 = ok).
int syncFolder(const std::string& dir);

// What a reader takes when it does not say: larger files are refused with a message.
constexpr std::uint64_t kDefaultMaxFileBytes = 256u << 20;

// Reads a whole file of at most `maxBytes`; throws InputError naming the path if it cannot be
// read, is a folder or a device (/dev/zero would never end), or is larger than `maxBytes`
// ("<path>: 300.0 MB, more than the 256.0 MB this reader accepts", or "... a <what> may have" when
// `what` names the kind of file). Pipes are read up to the limit.
std::string readFileBytes(const std::string& path, std::uint64_t maxBytes = kDefaultMaxFileBytes, const std::string& what = {});

// "12.5 MB", "800 KB", "7.7 KB", "17 bytes": sizes in messages.
std::string byteSizeText(std::uint64_t bytes);

}  // namespace tinyscope
