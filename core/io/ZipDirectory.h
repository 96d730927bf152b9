#pragma once
// The central directory of a zip archive (the index at its end): each entry's name, compression,
// sizes and CRC-32 as the archive declares them, read the way miniz reads it (the last end record,
// zip64 when its locator is there, names compared case-insensitively). The checkpoint reader
// checks these before miniz extracts anything: declared sizes bound the memory a record may take,
// and since PyTorch builds its miniz without CRC checks, the CRCs are compared here. Refuses what
// torch.save never writes: encryption, methods other than stored / deflate, names that differ only
// in case, sizes that the compressed bytes cannot hold, multi-disk archives.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tinyscope {

struct ZipEntry {
    std::string name;
    std::uint16_t method = 0;   // 0 stored, 8 deflate
    std::uint32_t crc32 = 0;
    std::uint64_t compressed_size = 0;
    std::uint64_t uncompressed_size = 0;
    std::uint64_t local_header_offset = 0;
};

class ZipDirectory {
public:
    // Throw InputError naming the file (and the entry) when the directory is unreadable or holds
    // something refused above.
    static ZipDirectory fromFile(const std::string& path);
    static ZipDirectory fromBytes(const std::string& bytes, const std::string& name);

    const std::vector<ZipEntry>& entries() const { return entries_; }
    // By name, ASCII case-insensitively as miniz looks records up; nullptr if absent.
    const ZipEntry* find(const std::string& name) const;

private:
    std::vector<ZipEntry> entries_;
    std::unordered_map<std::string, std::size_t> byName_;   // lower-case name -> index
};

// zlib's CRC-32 of a buffer of any size.
std::uint32_t crc32Of(const void* data, std::size_t size);

}  // namespace tinyscope
