#include "data/TeacherLogitCache.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace tinyscope {

TeacherLogitCache::TeacherLogitCache(int classes, int topK, std::size_t images, int draws)
    : classes_(classes), k_(topK), images_(images), draws_(draws)
{
    if (classes < 2 || classes > 256) throw InputError("teacher cache: " + std::to_string(classes) + " classes (2-256 supported)");
    if (topK < 1 || topK > classes)
        throw InputError("teacher cache: top-k must be 1.." + std::to_string(classes) + ", got " + std::to_string(topK));
    if (draws < 1) throw InputError("teacher cache: needs at least one augmentation draw");
    const std::size_t rows = images * static_cast<std::size_t>(draws);
    values_.assign(rows * static_cast<std::size_t>(k_), 0);
    classes_idx_.assign(rows * static_cast<std::size_t>(k_), 0);
    filled_.assign(rows, 0);
}

std::size_t TeacherLogitCache::row(int draw, std::size_t image) const
{
    if (draw < 0 || draw >= draws_ || image >= images_)
        throw InputError("teacher cache: no row for draw " + std::to_string(draw) + ", image " + std::to_string(image));
    return static_cast<std::size_t>(draw) * images_ + image;
}

void TeacherLogitCache::put(int draw, std::size_t image, const float* probabilities)
{
    const std::size_t r = row(draw, image);
    std::vector<int> order(static_cast<std::size_t>(classes_));
    std::iota(order.begin(), order.end(), 0);
    // Largest first; ties by the lower class index, so the cache is deterministic.
    std::partial_sort(order.begin(), order.begin() + k_, order.end(), [&](int a, int b) {
        return probabilities[a] != probabilities[b] ? probabilities[a] > probabilities[b] : a < b;
    });
    for (int j = 0; j < k_; ++j) {
        const double p = std::clamp(static_cast<double>(probabilities[order[static_cast<std::size_t>(j)]]), 0.0, 1.0);
        values_[r * static_cast<std::size_t>(k_) + static_cast<std::size_t>(j)] = static_cast<std::uint16_t>(std::lround(p * 65535.0));
        classes_idx_[r * static_cast<std::size_t>(k_) + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(order[static_cast<std::size_t>(j)]);
    }
    filled_[r] = 1;
}

bool TeacherLogitCache::filled(int draw, std::size_t image) const { return filled_[row(draw, image)] != 0; }

std::vector<float> TeacherLogitCache::targets(int draw, const std::vector<std::size_t>& images) const
{
    const std::size_t c = static_cast<std::size_t>(classes_), k = static_cast<std::size_t>(k_);
    std::vector<float> out(images.size() * c);
    for (std::size_t n = 0; n < images.size(); ++n) {
        const std::size_t r = row(draw, images[n]);
        if (!filled_[r])
            throw InputError("teacher cache: image " + std::to_string(images[n]) + " of draw " + std::to_string(draw) + " was never computed");
        float* t = &out[n * c];
        double top = 0;
        for (std::size_t j = 0; j < k; ++j) top += values_[r * k + j] / 65535.0;
        const float rest = k < c ? static_cast<float>(std::max(0.0, 1.0 - top) / static_cast<double>(c - k)) : 0.0f;
        std::fill(t, t + c, rest);
        for (std::size_t j = 0; j < k; ++j) t[classes_idx_[r * k + j]] = static_cast<float>(values_[r * k + j] / 65535.0);
    }
    return out;
}

namespace {
Json withShape(Json header, int classes, int k, std::size_t images, int draws)
{
    header["classes"] = classes;
    header["top_k"] = k;
    header["images"] = images;
    header["draws"] = draws;
    return header;
}
}  // namespace

void TeacherLogitCache::save(const std::string& path, const Json& header) const
{
    std::string bytes = withShape(header, classes_, k_, images_, draws_).dump() + "\n";
    const std::size_t at = bytes.size();
    bytes.resize(at + values_.size() * 2 + classes_idx_.size() + filled_.size());
    char* p = &bytes[at];
    for (std::uint16_t v : values_) {   // little-endian, whatever the host
        *p++ = static_cast<char>(v & 0xFF);
        *p++ = static_cast<char>(v >> 8);
    }
    std::memcpy(p, classes_idx_.data(), classes_idx_.size());
    std::memcpy(p + classes_idx_.size(), filled_.data(), filled_.size());
    writeFileAtomic(path, bytes);
}

bool TeacherLogitCache::load(const std::string& path, const Json& header)
{
    if (!fileExists(path)) return false;
    const std::string bytes = readFileBytes(path);
    const std::size_t nl = bytes.find('\n');
    if (nl == std::string::npos) throw InputError(path + ": not a teacher-logit cache (no header line)");
    const Json theirs = parseJson(bytes.substr(0, nl), path + ": header");
    if (theirs != withShape(header, classes_, k_, images_, draws_)) return false;
    const std::size_t need = values_.size() * 2 + classes_idx_.size() + filled_.size();
    if (bytes.size() - nl - 1 != need)
        throw InputError(path + ": truncated teacher-logit cache (" + std::to_string(bytes.size() - nl - 1) + " bytes of rows, expected " +
                         std::to_string(need) + ")");
    const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data() + nl + 1);
    for (std::uint16_t& v : values_) {
        v = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
        p += 2;
    }
    std::memcpy(classes_idx_.data(), p, classes_idx_.size());
    std::memcpy(filled_.data(), p + classes_idx_.size(), filled_.size());
    for (std::uint8_t c : classes_idx_)
        if (c >= classes_) throw InputError(path + ": class index " + std::to_string(c) + " out of range in the teacher-logit cache");
    return true;
}

}  // namespace tinyscope
