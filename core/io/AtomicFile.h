#pragma once
// Atomic file writes: the data goes to a temporary file in the same folder, is flushed,
// then renamed over the target, so readers see the old file or the new one, never a torn one.
#include <cstddef>
#include <string>

namespace tinyscope {

void writeFileAtomic(const std::string& path, const std::string& bytes);

// Reads a whole file; throws InputError naming the path if it cannot be read.
std::string readFileBytes(const std::string& path);
// The same, refusing a file (or a device such as /dev/zero) longer than `maxBytes`: the InputError
// says the file is larger than a `what` may be.
std::string readFileBytes(const std::string& path, std::size_t maxBytes, const std::string& what);

}  // namespace tinyscope
