#pragma once
// Short text forms used in messages and tables.
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

template <class T>
std::string formatList(const std::vector<T>& v)
{
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += ", ";
        if constexpr (std::is_same_v<T, bool>) s += v[i] ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) s += v[i];
        else s += std::to_string(v[i]);
    }
    return s + "]";
}

// 12345678 -> "12,345,678"
std::string groupThousands(std::int64_t v);

// s ends with suffix.
inline bool endsWith(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// 12345678 -> "12,345,678 B"
std::string bytesText(std::int64_t bytes);

// ASCII letters in lower case; other bytes as they are.
std::string asciiLower(std::string s);

// Fixed-point with `decimals` digits: formatFixed(8.302128, 2) -> "8.30"
std::string formatFixed(double v, int decimals);

// Bytes in KB with one decimal: kilobytesText(255104) -> "249.1 KB" (bars, fits / over texts)
std::string kilobytesText(std::int64_t bytes);

// FNV-1a (64 bit) of a text: the same value on every machine and run (a fingerprint, not a
// cryptographic hash) — predictor cards' space fingerprints, ranks comparing what they run.
std::uint64_t fnv1a64(const std::string& text);

// A user-given string as a message may quote it (file names, board names, host names, keys of
// untrusted files): control characters (C0, DEL, C1), bidirectional overrides and bytes that are not
// well-formed UTF-8 are written as escapes (\n, \t, \x1b, \u202e, …); readable UTF-8 text (a
// folder called "josé") stays as it is. A value longer than `maxChars` is cut, with its length said:
// "abc\ndef", "aaaa... (10,485,760 bytes)". No quotes are added. A terminal shows exactly what the
// value holds and a hostile value cannot move the cursor, recolour the screen or flood the log.
std::string escapedForMessage(const std::string& value, std::size_t maxChars = 80);

}  // namespace tinyscope
