#include "io/ZipDirectory.h"

#include "Error.h"
#include "io/Text.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>

namespace tinyscope {

namespace {

constexpr std::uint32_t kEndSig = 0x06054b50, kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50,
                        kCentralSig = 0x02014b50;
constexpr std::size_t kEndSize = 22, kZip64EndSize = 56, kZip64LocatorSize = 20, kCentralSize = 46, kLocalSize = 30;
constexpr std::uint64_t kMaxDirectoryBytes = std::uint64_t(64) << 20;
// Deflate cannot expand more than 1032:1 (258 bytes per 2-bit code); a little slack for headers.
constexpr std::uint64_t kMaxDeflateRatio = 1040;

std::uint64_t le(const std::string& b, std::size_t at, int n)
{
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b[at + k])) << (8 * k);
    return v;
}

using ReadAt = std::function<std::string(std::uint64_t offset, std::size_t n)>;

class ZipDirectoryParser {
public:
    ZipDirectoryParser(std::uint64_t size, ReadAt read, std::string name) : size_(size), read_(std::move(read)), name_(std::move(name)) {}

    [[noreturn]] void fail(const std::string& why) const { throw InputError(name_ + ": unreadable checkpoint (corrupt zip): " + why); }

    std::string at(std::uint64_t offset, std::size_t n) const
    {
        if (offset > size_ || n > size_ - offset) fail("a directory record lies past the end of the file");
        std::string b = read_(offset, n);
        if (b.size() != n) fail("cannot read " + std::to_string(n) + " bytes at offset " + std::to_string(offset));
        return b;
    }

    void parse(std::vector<ZipEntry>& entries, std::unordered_map<std::string, std::size_t>& byName)
    {
        if (size_ < kEndSize) fail("no end-of-central-directory record");
        // The last end record with room for itself after it, within the 64 KiB a comment may take.
        const std::size_t tailSize = static_cast<std::size_t>(std::min<std::uint64_t>(size_, kEndSize + 0xFFFF));
        const std::uint64_t tailStart = size_ - tailSize;
        const std::string tail = at(tailStart, tailSize);
        std::int64_t found = -1;
        for (std::int64_t i = static_cast<std::int64_t>(tailSize - kEndSize); i >= 0; --i)
            if (le(tail, static_cast<std::size_t>(i), 4) == kEndSig) {
                found = i;
                break;
            }
        if (found < 0) fail("no end-of-central-directory record");
        const std::uint64_t endOffset = tailStart + static_cast<std::uint64_t>(found);
        const std::string end = tail.substr(static_cast<std::size_t>(found), kEndSize);
        std::uint64_t diskNo = le(end, 4, 2), cdDisk = le(end, 6, 2), onDisk = le(end, 8, 2), total = le(end, 10, 2);
        std::uint64_t cdSize = le(end, 12, 4), cdOffset = le(end, 16, 4);
        // zip64: miniz takes the zip64 end record whenever its locator precedes the end record.
        if (endOffset >= kZip64LocatorSize + kZip64EndSize) {
            const std::string loc = at(endOffset - kZip64LocatorSize, kZip64LocatorSize);
            if (le(loc, 0, 4) == kZip64LocatorSig) {
                const std::uint64_t z = le(loc, 8, 8);
                if (z > size_ - kZip64EndSize) fail("the zip64 end record lies past the end of the file");
                const std::string e64 = at(z, kZip64EndSize);
                if (le(e64, 0, 4) == kZip64EndSig) {
                    if (le(loc, 16, 4) != 1) fail("multi-disk archives are not supported");
                    diskNo = le(e64, 16, 4);
                    cdDisk = le(e64, 20, 4);
                    onDisk = le(e64, 24, 8);
                    total = le(e64, 32, 8);
                    cdSize = le(e64, 40, 8);
                    cdOffset = le(e64, 48, 8);
                }
            }
        }
        if (diskNo != 0 || cdDisk != 0 || onDisk != total) fail("multi-disk archives are not supported");
        if (total == 0) fail("the archive holds no files");
        if (cdSize > kMaxDirectoryBytes) fail("the central directory declares " + std::to_string(cdSize) + " bytes");
        if (cdOffset > size_ || cdSize > size_ - cdOffset) fail("the central directory lies past the end of the file");
        if (total > cdSize / kCentralSize) fail(std::to_string(total) + " entries cannot fit a " + std::to_string(cdSize) + "-byte directory");
        const std::string cd = at(cdOffset, static_cast<std::size_t>(cdSize));
        std::size_t p = 0;
        entries.reserve(static_cast<std::size_t>(total));
        for (std::uint64_t i = 0; i < total; ++i) {
            if (p + kCentralSize > cd.size() || le(cd, p, 4) != kCentralSig) fail("central directory entry " + std::to_string(i) + " is damaged");
            ZipEntry e;
            const std::uint64_t flags = le(cd, p + 8, 2);
            e.method = static_cast<std::uint16_t>(le(cd, p + 10, 2));
            e.crc32 = static_cast<std::uint32_t>(le(cd, p + 16, 4));
            e.compressed_size = le(cd, p + 20, 4);
            e.uncompressed_size = le(cd, p + 24, 4);
            const std::size_t nameLen = le(cd, p + 28, 2), extraLen = le(cd, p + 30, 2), commentLen = le(cd, p + 32, 2);
            e.local_header_offset = le(cd, p + 42, 4);
            if (p + kCentralSize + nameLen + extraLen + commentLen > cd.size()) fail("central directory entry " + std::to_string(i) + " is damaged");
            e.name = cd.substr(p + kCentralSize, nameLen);
            // zip64 extended information: the 64-bit values of the fields that hold 0xFFFFFFFF, in order.
            const std::string extra = cd.substr(p + kCentralSize + nameLen, extraLen);
            for (std::size_t x = 0; x + 4 <= extra.size();) {
                const std::uint64_t id = le(extra, x, 2), len = le(extra, x + 2, 2);
                if (x + 4 + len > extra.size()) break;
                if (id == 0x0001) {
                    std::size_t f = x + 4;
                    auto wide = [&](std::uint64_t& field) {
                        if (field != 0xFFFFFFFFu) return;
                        if (f + 8 > x + 4 + len) fail("'" + e.name + "': zip64 field is truncated");
                        field = le(extra, f, 8);
                        f += 8;
                    };
                    wide(e.uncompressed_size);
                    wide(e.compressed_size);
                    wide(e.local_header_offset);
                }
                x += 4 + static_cast<std::size_t>(len);
            }
            p += kCentralSize + nameLen + extraLen + commentLen;

            const std::string where = "'" + e.name + "'";
            if (flags & 1) fail(where + " is encrypted");
            if (e.method != 0 && e.method != 8) fail(where + " uses compression method " + std::to_string(e.method) + " (only stored and deflate are read)");
            if (e.method == 0 && e.compressed_size != e.uncompressed_size)
                fail(where + " is stored but declares " + std::to_string(e.uncompressed_size) + " bytes from " +
                     std::to_string(e.compressed_size));
            if (e.method == 8 && (e.uncompressed_size > e.compressed_size * kMaxDeflateRatio + 1024 || e.compressed_size > size_))
                fail(where + " declares " + std::to_string(e.uncompressed_size) + " bytes from " + std::to_string(e.compressed_size) +
                     " compressed bytes, more than deflate can expand");
            if (e.local_header_offset > size_ || size_ - e.local_header_offset < kLocalSize ||
                e.compressed_size > size_ - e.local_header_offset - kLocalSize)
                fail(where + "'s data lies past the end of the file");
            const std::string key = asciiLower(e.name);
            if (byName.count(key)) fail("two entries are named " + where + " (names are compared ignoring case)");
            byName.emplace(key, entries.size());
            entries.push_back(std::move(e));
        }
    }

private:
    std::uint64_t size_;
    ReadAt read_;
    std::string name_;
};

}  // namespace

ZipDirectory ZipDirectory::fromBytes(const std::string& bytes, const std::string& name)
{
    ZipDirectory d;
    ZipDirectoryParser parser(bytes.size(),
                              [&bytes](std::uint64_t off, std::size_t n) { return bytes.substr(static_cast<std::size_t>(off), n); }, name);
    parser.parse(d.entries_, d.byName_);
    return d;
}

ZipDirectory ZipDirectory::fromFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) throw InputError(path + ": cannot tell the file's size");
    ZipDirectory d;
    ZipDirectoryParser parser(static_cast<std::uint64_t>(size),
                              [&in](std::uint64_t off, std::size_t n) {
                                  std::string b(n, '\0');
                                  in.clear();
                                  in.seekg(static_cast<std::streamoff>(off));
                                  in.read(b.data(), static_cast<std::streamsize>(n));
                                  b.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
                                  return b;
                              },
                              path);
    parser.parse(d.entries_, d.byName_);
    return d;
}

const ZipEntry* ZipDirectory::find(const std::string& name) const
{
    auto it = byName_.find(asciiLower(name));
    return it == byName_.end() ? nullptr : &entries_[it->second];
}

std::uint32_t crc32Of(const void* data, std::size_t size)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    const auto* p = static_cast<const Bytef*>(data);
    while (size > 0) {
        const std::size_t n = std::min<std::size_t>(size, std::size_t(1) << 30);
        crc = crc32(crc, p, static_cast<uInt>(n));
        p += n;
        size -= n;
    }
    return static_cast<std::uint32_t>(crc);
}

}  // namespace tinyscope
