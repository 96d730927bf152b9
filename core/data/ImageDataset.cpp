#include "data/ImageDataset.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/OutputPaths.h"
#include "io/Text.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <dirent.h>
#include <map>
#include <sys/stat.h>
#include <utility>

namespace tinyscope {

namespace {

std::vector<std::string> listDir(const std::string& dir)
{
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

bool hasImageExtension(const std::string& name)
{
    auto dot = name.rfind('.');
    if (dot == std::string::npos) return false;
    std::string ext = name.substr(dot);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* e : {".jpg", ".jpeg", ".png"})
        if (ext == e) return true;
    return false;
}

// The folders read so far, by (device, inode): the path each was first read under.
using VisitedFolders = std::map<std::pair<dev_t, ino_t>, std::string>;

// Marks `dir` (which exists) as read; a folder read before is refused.
void visit(const std::string& dir, VisitedFolders& visited)
{
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return;
    const auto [at, isNew] = visited.emplace(std::make_pair(st.st_dev, st.st_ino), dir);
    if (!isNew)
        throw InputError(pathForMessage(dir) + ": the folder " + pathForMessage(at->second) +
                         " again (a symbolic link cycle, or a second link to one folder): its images would be counted more than once; "
                         "remove the link");
}

// Recursive, sorted, as torchvision's os.walk-based make_dataset (which follows links), each
// folder read once.
void collect(const std::string& dir, std::vector<std::string>& out, VisitedFolders& visited)
{
    visit(dir, visited);
    for (const std::string& n : listDir(dir)) {
        const std::string p = dir + "/" + n;
        if (isDirectory(p)) collect(p, out, visited);
        else if (hasImageExtension(n)) out.push_back(p);
    }
}

std::uint32_t be32(const std::string& s, std::size_t off)
{
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[off])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[off + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[off + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[off + 3]));
}

// An IDX file is held in memory whole: a gigabyte is ~1.3 million 28x28 images.
constexpr std::uint64_t kMaxIdxBytes = std::uint64_t(1) << 30;

// The bytes an IDX file's header declares (magic 0x00000800 | type << 8 | rank, then one big-endian
// count per dimension), or 0 if the first bytes are not a complete header of unsigned bytes.
std::uint64_t idxDeclaredBytes(const std::string& head)
{
    if (head.size() < 4 || be32(head, 0) >> 8 != 0x08) return 0;
    const std::uint32_t rank = be32(head, 0) & 0xFF;
    if (rank < 1 || rank > 4 || head.size() < 4 + 4 * std::size_t(rank)) return 0;
    std::uint64_t n = 1;
    for (std::uint32_t d = 0; d < rank; ++d) {
        n *= be32(head, 4 + 4 * d);
        if (n > kMaxIdxBytes) return kMaxIdxBytes + 1;
    }
    return 4 + 4 * std::uint64_t(rank) + n;
}

// Reads an IDX file, gzip-compressed or not. Decompression stops at the size its header declares,
// and a header declaring more than kMaxIdxBytes is refused before anything large is allocated,
// so a small "gzip bomb" cannot take the machine's memory.
std::string readIdx(const std::string& path)
{
    std::string raw = readFileBytes(path, kMaxIdxBytes);
    const auto tooLarge = [&](std::uint64_t declared) {
        return InputError(path + ": the IDX header declares " + byteSizeText(declared) + ", more than the " + byteSizeText(kMaxIdxBytes) +
                          " a dataset file may hold here");
    };
    if (raw.size() < 2 || static_cast<unsigned char>(raw[0]) != 0x1f || static_cast<unsigned char>(raw[1]) != 0x8b) {
        if (const std::uint64_t d = idxDeclaredBytes(raw); d > kMaxIdxBytes) throw tooLarge(d);
        return raw;
    }
    z_stream zs{};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw InputError(path + ": cannot start gzip decoding");
    struct Inflater {
        z_stream& zs;
        ~Inflater() { inflateEnd(&zs); }
    } guard{zs};
    zs.next_in = reinterpret_cast<Bytef*>(raw.data());
    zs.avail_in = static_cast<uInt>(raw.size());
    std::string out;
    std::uint64_t declared = 0;   // known once the header is in
    char buf[1 << 16];
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END)
            throw InputError(path + ": corrupt gzip data (" + std::string(zs.msg ? zs.msg : rc == Z_BUF_ERROR ? "truncated" : "inflate failed") + ")");
        out.append(buf, sizeof buf - zs.avail_out);
        if (!declared && out.size() >= 20) {
            declared = idxDeclaredBytes(out);
            if (declared > kMaxIdxBytes) throw tooLarge(declared);
            if (declared) out.reserve(static_cast<std::size_t>(declared));
        }
        if (declared && out.size() > declared)
            throw InputError(path + ": decompresses to more than the " + byteSizeText(declared) + " its IDX header declares");
        if (!declared && out.size() > (1u << 20))
            throw InputError(path + ": not an IDX file (no IDX header in the first megabyte of decompressed data)");
        if (rc != Z_STREAM_END && zs.avail_in == 0 && zs.avail_out != 0)
            throw InputError(path + ": corrupt gzip data (truncated)");
    }
    return out;
}

}  // namespace

ImageFolderDataset::ImageFolderDataset(const std::string& root)
{
    source_ = root;
    if (!isDirectory(root)) throw InputError(pathForMessage(root) + ": not a folder");
    for (const std::string& n : listDir(root))
        if (isDirectory(root + "/" + n)) classes_.push_back(n);
    if (classes_.empty()) throw InputError(pathForMessage(root) + ": no class sub-folders (expected ROOT/<class>/<image files>)");
    VisitedFolders visited;
    visit(root, visited);   // a link back to the root is a cycle too
    for (std::size_t c = 0; c < classes_.size(); ++c) {
        std::vector<std::string> files;
        collect(root + "/" + classes_[c], files, visited);
        for (auto& f : files) {
            files_.push_back(std::move(f));
            labels_.push_back(static_cast<int>(c));
        }
    }
    if (files_.empty()) throw InputError(pathForMessage(root) + ": the class folders hold no PNG or JPEG images");
}

Image ImageFolderDataset::image(std::size_t i) const
{
    return decodeImageFile(files_[i]);
}

std::string ImageFolderDataset::itemBytes(std::size_t i) const
{
    return readFileBytes(files_[i], kMaxImageFileBytes, "image");
}

IdxDataset::IdxDataset(const std::string& imagesPath, const std::string& labelsPath, std::vector<std::string> classNames)
{
    source_ = imagesPath;
    std::string im = readIdx(imagesPath);
    std::string lb = readIdx(labelsPath);
    if (im.size() < 16 || be32(im, 0) != 0x00000803)
        throw InputError(imagesPath + ": not an IDX image file (expected magic 0x00000803)");
    if (lb.size() < 8 || be32(lb, 0) != 0x00000801)
        throw InputError(labelsPath + ": not an IDX label file (expected magic 0x00000801)");
    const std::uint32_t n = be32(im, 4);
    h_ = static_cast<int>(be32(im, 8));
    w_ = static_cast<int>(be32(im, 12));
    if (h_ <= 0 || w_ <= 0 || h_ > 4096 || w_ > 4096) throw InputError(imagesPath + ": implausible image size");
    const std::size_t need = 16 + static_cast<std::size_t>(n) * static_cast<std::size_t>(h_ * w_);
    if (im.size() < need)
        throw InputError(imagesPath + ": truncated: " + std::to_string(n) + " images need " + std::to_string(need) +
                         " bytes, file has " + std::to_string(im.size()));
    if (be32(lb, 4) != n || lb.size() < 8 + static_cast<std::size_t>(n))
        throw InputError(labelsPath + ": holds " + std::to_string(be32(lb, 4)) + " labels for " + std::to_string(n) + " images");
    pixels_.assign(im.begin() + 16, im.begin() + static_cast<std::ptrdiff_t>(need));
    labels_.resize(n);
    int maxLabel = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        labels_[i] = static_cast<unsigned char>(lb[8 + i]);
        maxLabel = std::max(maxLabel, labels_[i]);
    }
    classes_ = std::move(classNames);
    if (classes_.empty())
        for (int c = 0; c <= maxLabel; ++c) classes_.push_back(std::to_string(c));
    if (maxLabel >= static_cast<int>(classes_.size()))
        throw InputError(labelsPath + ": label " + std::to_string(maxLabel) + " but only " + std::to_string(classes_.size()) + " classes");
}

Image IdxDataset::image(std::size_t i) const
{
    Image img;
    img.width = w_;
    img.height = h_;
    img.channels = 1;
    const std::uint8_t* p = pixels(i);
    img.pixels.assign(p, p + static_cast<std::size_t>(w_ * h_));
    return img;
}

std::string IdxDataset::itemName(std::size_t i) const
{
    return source_ + "[" + std::to_string(i) + "]";
}

std::string IdxDataset::itemBytes(std::size_t i) const
{
    const std::uint8_t* p = pixels(i);
    return std::to_string(w_) + "x" + std::to_string(h_) + ":" + std::string(p, p + static_cast<std::size_t>(w_ * h_));
}

SubsetDataset::SubsetDataset(std::shared_ptr<const ImageDataset> base, std::vector<std::size_t> indices, std::string name)
    : base_(std::move(base)), idx_(std::move(indices))
{
    classes_ = base_->classNames();
    source_ = std::move(name);
    for (std::size_t i : idx_)
        if (i >= base_->size()) throw InputError(source_ + ": index " + std::to_string(i) + " out of range");
}

std::string fashionMnistDir()
{
    for (const char* d : {"/usr/share/datasets/fashion-mnist"})
        if (fileExists(std::string(d) + "/t10k-images-idx3-ubyte.gz")) return d;
    return "";
}

const std::vector<std::string>& fashionMnistClasses()
{
    static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    return names;
}

std::unique_ptr<ImageDataset> openDataset(const std::string& spec)
{
    if (spec.rfind("fashion-mnist", 0) == 0) {
        const std::string dir = fashionMnistDir();
        if (dir.empty())
            throw InputError("Fashion-MNIST is not installed: install the Debian package dataset-fashion-mnist "
                             "(apt-get install dataset-fashion-mnist)");
        const std::string part = spec.size() > 14 ? spec.substr(14) : "test";
        if (spec.size() > 13 && spec[13] != ':')
            throw InputError("unknown dataset '" + escapedForMessage(spec) + "' (use fashion-mnist:fit, :holdout, :train or :test)");
        if (part != "train" && part != "test" && part != "fit" && part != "holdout")
            throw InputError("unknown part '" + escapedForMessage(part) + "' of fashion-mnist (use fit, holdout, train or test)");
        const std::string p = dir + (part == "test" ? "/t10k" : "/train");
        auto full = std::make_unique<IdxDataset>(p + "-images-idx3-ubyte.gz", p + "-labels-idx1-ubyte.gz", fashionMnistClasses());
        if (part == "train" || part == "test") return full;
        const std::size_t n = full->size(), cut = n - kFashionMnistHoldout;
        std::vector<std::size_t> idx;
        for (std::size_t i = part == "fit" ? 0 : cut; i < (part == "fit" ? cut : n); ++i) idx.push_back(i);
        return std::make_unique<SubsetDataset>(std::shared_ptr<const ImageDataset>(std::move(full)), std::move(idx), spec);
    }
    if (!isDirectory(spec)) throw InputError(pathForMessage(spec) + ": no such dataset folder");
    for (const char* stem : {"t10k", "test", "train"}) {
        for (const char* gz : {".gz", ""}) {
            const std::string im = spec + "/" + stem + "-images-idx3-ubyte" + gz;
            const std::string lb = spec + "/" + stem + "-labels-idx1-ubyte" + gz;
            if (fileExists(im) && fileExists(lb)) return std::make_unique<IdxDataset>(im, lb);
        }
    }
    return std::make_unique<ImageFolderDataset>(spec);
}

std::uint64_t contentFingerprint(const ImageDataset& data, const std::vector<std::size_t>& items)
{
    std::string summary;
    for (const std::string& c : data.classNames()) summary += c + '\n';
    for (std::size_t i : items) {
        std::string bytes;
        try {
            bytes = data.itemBytes(i);
        } catch (const InputError&) {
            bytes = "unreadable";
        }
        summary += std::to_string(data.label(i)) + ':' + std::to_string(fnv1a64(bytes)) + '\n';
    }
    return fnv1a64(summary);
}

std::vector<std::size_t> splitIndices(std::size_t n, int split)
{
    if (split > 1) throw InputError("split must be 0 or 1 (the even or odd images, the lab's [split::2]) or -1 for all, got " + std::to_string(split));
    std::vector<std::size_t> out;
    if (split < 0) {
        out.resize(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = i;
        return out;
    }
    for (std::size_t i = static_cast<std::size_t>(split); i < n; i += 2) out.push_back(i);
    return out;
}

}  // namespace tinyscope
