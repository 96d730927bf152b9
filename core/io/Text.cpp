#include "io/Text.h"

#include <cstdio>

namespace tinyscope {

std::string groupThousands(std::int64_t v)
{
    bool neg = v < 0;
    std::string digits = std::to_string(neg ? -v : v);
    std::string out;
    int n = static_cast<int>(digits.size());
    for (int i = 0; i < n; ++i) {
        out += digits[static_cast<std::size_t>(i)];
        int left = n - 1 - i;
        if (left > 0 && left % 3 == 0) out += ',';
    }
    return neg ? "-" + out : out;
}

std::string formatFixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string kilobytesText(std::int64_t bytes) { return formatFixed(static_cast<double>(bytes) / 1024.0, 1) + " KB"; }

std::uint64_t fnv1a64(const std::string& text)
{
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

}  // namespace tinyscope
