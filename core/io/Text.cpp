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

std::string bytesText(std::int64_t bytes) { return groupThousands(bytes) + " B"; }

std::string asciiLower(std::string s)
{
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
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

namespace {

// The length of the well-formed UTF-8 sequence at value[i] (2..4) and its code point, or 0 when the
// bytes there are not one (a stray continuation byte, a truncated or overlong sequence, a surrogate).
std::size_t utf8Sequence(const std::string& value, std::size_t i, std::uint32_t* cp)
{
    const unsigned char c = static_cast<unsigned char>(value[i]);
    std::size_t n = 0;
    std::uint32_t v = 0, min = 0;
    if (c >= 0xc2 && c <= 0xdf) n = 2, v = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, v = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, v = c & 0x07, min = 0x10000;
    else return 0;
    if (i + n > value.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const unsigned char d = static_cast<unsigned char>(value[i + k]);
        if ((d & 0xc0) != 0x80) return 0;
        v = (v << 6) | (d & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return n;
}

// Code points a terminal acts on or that reorder what it shows: C1 controls, bidirectional
// embeddings, overrides and isolates ("Trojan Source"), line and paragraph separators.
bool invisibleControl(std::uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

}  // namespace

std::string escapedForMessage(const std::string& value, std::size_t maxChars)
{
    std::string out;
    std::size_t i = 0;
    while (i < value.size() && out.size() < maxChars) {
        const unsigned char c = static_cast<unsigned char>(value[i]);
        std::uint32_t cp = 0;
        char buf[16];
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c == '\\') out += "\\\\";
        else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
        else if (const std::size_t n = c >= 0x80 ? utf8Sequence(value, i, &cp) : 0; n > 0) {
            if (invisibleControl(cp)) {
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
                out += buf;
            } else {
                out.append(value, i, n);   // readable text in any script stays as it is
            }
            i += n;
            continue;
        } else {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
        ++i;
    }
    if (i < value.size()) out += "... (" + groupThousands(static_cast<std::int64_t>(value.size())) + " bytes)";
    return out;
}

}  // namespace tinyscope
