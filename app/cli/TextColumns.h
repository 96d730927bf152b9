#pragma once
// Columns of the CLI's plain-text tables.
#include <string>

namespace tinyscope::cli {

// `s` padded with spaces to `width` (on the left when `right`); a longer `s` as it is.
inline std::string padded(std::string s, std::size_t width, bool right = false)
{
    if (s.size() >= width) return s;
    return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace tinyscope::cli
