#include "data/Image.h"

#include "Error.h"
#include "io/AtomicFile.h"

#include <algorithm>
#include <cmath>

// Only the two formats the workbench claims: stb_image's other decoders (HDR, PSD, PIC, GIF, TGA,
// PNM, BMP) are not compiled in, so a file with a misleading name never reaches them (stb 2.27's
// HDR reader loops forever on crafted input, CVE-2021-42715).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#include <stb/stb_image.h>

namespace tinyscope {

namespace {
bool isPng(const std::string& b) { return b.size() >= 8 && b.compare(0, 8, "\x89PNG\r\n\x1a\n", 8) == 0; }
bool isJpeg(const std::string& b)
{
    return b.size() >= 3 && static_cast<unsigned char>(b[0]) == 0xFF && static_cast<unsigned char>(b[1]) == 0xD8 &&
           static_cast<unsigned char>(b[2]) == 0xFF;
}
// stb_image 2.27 allocates its buffer for the compressed data at the first IDAT chunk that holds
// bytes, but copies every IDAT chunk with memcpy: an empty first one becomes memcpy(NULL, p, 0),
// undefined behaviour (found by bench/fuzz/fuzz_image under UBSan). Empty IDAT chunks carry
// nothing, so they are dropped before decoding; the rest of the file is left as it is (a
// truncated chunk list is stb_image's to report). True when `out` holds the file without them.
bool withoutEmptyIdatChunks(const std::string& b, std::string& out)
{
    auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(b[i])); };
    std::size_t pos = 8, copied = 0;
    bool dropped = false;
    while (pos + 12 <= b.size()) {
        const std::uint32_t len = byte(pos) << 24 | byte(pos + 1) << 16 | byte(pos + 2) << 8 | byte(pos + 3);
        if (len > b.size() - pos - 12) break;
        if (len == 0 && b.compare(pos + 4, 4, "IDAT") == 0) {
            if (!dropped) out.clear();
            out.append(b, copied, pos - copied);
            copied = pos + 12;
            dropped = true;
        }
        pos += 12 + len;
    }
    if (dropped) out.append(b, copied, std::string::npos);
    return dropped;
}

}  // namespace

Image decodeImage(const std::string& file, const std::string& source)
{
    std::string cleaned;
    const std::string& bytes = isPng(file) && withoutEmptyIdatChunks(file, cleaned) ? cleaned : file;
    if (bytes.size() > kMaxImageFileBytes)
        throw InputError(source + ": cannot decode image: " + std::to_string(bytes.size()) + " bytes is more than an image file may have here");
    if (!isPng(bytes) && !isJpeg(bytes)) throw InputError(source + ": cannot decode image: not a PNG or JPEG file");
    int w = 0, h = 0, n = 0;
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    if (!stbi_info_from_memory(data, static_cast<int>(bytes.size()), &w, &h, &n))
        throw InputError(source + ": cannot decode image: " + (stbi_failure_reason() ? stbi_failure_reason() : "unknown format"));
    if (w < 1 || h < 1 || w > kMaxImageSide || h > kMaxImageSide || static_cast<long long>(w) * h > kMaxImagePixels)
        throw InputError(source + ": cannot decode image: " + std::to_string(w) + "x" + std::to_string(h) + " is larger than " +
                         std::to_string(kMaxImageSide) + " px a side or " + std::to_string(kMaxImagePixels / 1000000) + " megapixels");
    const int want = (n == 1 || n == 2) ? 1 : 3;
    stbi_uc* px = stbi_load_from_memory(data, static_cast<int>(bytes.size()), &w, &h, &n, want);
    if (!px) throw InputError(source + ": cannot decode image: " + (stbi_failure_reason() ? stbi_failure_reason() : "corrupt data"));
    Image img;
    img.width = w;
    img.height = h;
    img.channels = want;
    img.pixels.assign(px, px + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * static_cast<std::size_t>(want));
    stbi_image_free(px);
    return img;
}

Image decodeImageFile(const std::string& path)
{
    return decodeImage(readFileBytes(path, kMaxImageFileBytes), path);
}

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

// PIL's precompute_coeffs for the bilinear (triangle) filter, normalised to fixed point.
struct Coeffs {
    int ksize = 0;
    std::vector<int> bounds;      // per output: xmin, xsize
    std::vector<std::int32_t> k;  // per output: ksize coefficients
};

Coeffs precompute(int inSize, int outSize)
{
    const double scale = static_cast<double>(inSize) / outSize;
    const double filterscale = std::max(scale, 1.0);
    const double support = 1.0 * filterscale;
    Coeffs c;
    c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
    c.bounds.resize(static_cast<std::size_t>(outSize) * 2);
    c.k.assign(static_cast<std::size_t>(outSize) * static_cast<std::size_t>(c.ksize), 0);
    std::vector<double> kk(static_cast<std::size_t>(c.ksize));
    for (int xx = 0; xx < outSize; ++xx) {
        const double center = (xx + 0.5) * scale;
        const double ss = 1.0 / filterscale;
        int xmin = static_cast<int>(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = static_cast<int>(center + support + 0.5);
        if (xmax > inSize) xmax = inSize;
        xmax -= xmin;
        double ww = 0.0;
        for (int x = 0; x < xmax; ++x) {
            double t = (x + xmin - center + 0.5) * ss;
            t = std::fabs(t);
            const double w = t < 1.0 ? 1.0 - t : 0.0;
            kk[static_cast<std::size_t>(x)] = w;
            ww += w;
        }
        for (int x = 0; x < xmax; ++x) {
            double v = ww != 0.0 ? kk[static_cast<std::size_t>(x)] / ww : 0.0;
            // normalize_coeffs_8bpc: round half away from zero
            c.k[static_cast<std::size_t>(xx) * static_cast<std::size_t>(c.ksize) + static_cast<std::size_t>(x)] =
                static_cast<std::int32_t>(v < 0 ? std::trunc(-0.5 + v * (1 << kPrecisionBits))
                                                : std::trunc(0.5 + v * (1 << kPrecisionBits)));
        }
        c.bounds[static_cast<std::size_t>(xx) * 2] = xmin;
        c.bounds[static_cast<std::size_t>(xx) * 2 + 1] = xmax;
    }
    return c;
}

inline std::uint8_t clip8(std::int64_t v)
{
    v >>= kPrecisionBits;
    return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

}  // namespace

Image resizeBilinear(const Image& in, int width, int height)
{
    if (in.width == width && in.height == height) return in;
    const int ch = in.channels;
    // Horizontal pass over the rows the vertical pass needs (all of them here).
    Image mid;
    if (width != in.width) {
        Coeffs cx = precompute(in.width, width);
        mid.width = width;
        mid.height = in.height;
        mid.channels = ch;
        mid.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(in.height) * static_cast<std::size_t>(ch));
        for (int y = 0; y < in.height; ++y)
            for (int xx = 0; xx < width; ++xx) {
                const int xmin = cx.bounds[static_cast<std::size_t>(xx) * 2], xs = cx.bounds[static_cast<std::size_t>(xx) * 2 + 1];
                const std::int32_t* k = &cx.k[static_cast<std::size_t>(xx) * static_cast<std::size_t>(cx.ksize)];
                for (int c = 0; c < ch; ++c) {
                    std::int64_t ss = 1 << (kPrecisionBits - 1);
                    for (int x = 0; x < xs; ++x) ss += static_cast<std::int64_t>(in.at(x + xmin, y, c)) * k[x];
                    mid.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(xx)) *
                                   static_cast<std::size_t>(ch) + static_cast<std::size_t>(c)] = clip8(ss);
                }
            }
    } else {
        mid = in;
    }
    if (height == mid.height) return mid;
    Coeffs cy = precompute(mid.height, height);
    Image out;
    out.width = mid.width;
    out.height = height;
    out.channels = ch;
    out.pixels.resize(static_cast<std::size_t>(mid.width) * static_cast<std::size_t>(height) * static_cast<std::size_t>(ch));
    for (int yy = 0; yy < height; ++yy) {
        const int ymin = cy.bounds[static_cast<std::size_t>(yy) * 2], ys = cy.bounds[static_cast<std::size_t>(yy) * 2 + 1];
        const std::int32_t* k = &cy.k[static_cast<std::size_t>(yy) * static_cast<std::size_t>(cy.ksize)];
        for (int x = 0; x < mid.width; ++x)
            for (int c = 0; c < ch; ++c) {
                std::int64_t ss = 1 << (kPrecisionBits - 1);
                for (int y = 0; y < ys; ++y) ss += static_cast<std::int64_t>(mid.at(x, y + ymin, c)) * k[y];
                out.pixels[(static_cast<std::size_t>(yy) * static_cast<std::size_t>(mid.width) + static_cast<std::size_t>(x)) *
                               static_cast<std::size_t>(ch) + static_cast<std::size_t>(c)] = clip8(ss);
            }
    }
    return out;
}

void imageToTensor(const Image& img, int r, float* out, const Normalization& norm)
{
    const Image sized = resizeBilinear(img, r, r);
    const std::size_t plane = static_cast<std::size_t>(r) * static_cast<std::size_t>(r);
    for (int c = 0; c < 3; ++c) {
        const int src = sized.channels == 1 ? 0 : c;
        float* o = out + static_cast<std::size_t>(c) * plane;
        // torchvision's order of operations: ToTensor (v / 255), then Normalize ((x - mean) / std).
        for (std::size_t i = 0; i < plane; ++i) {
            const float v = static_cast<float>(sized.pixels[i * static_cast<std::size_t>(sized.channels) + static_cast<std::size_t>(src)]) / 255.0f;
            o[i] = (v - norm.mean[c]) / norm.std[c];
        }
    }
}

}  // namespace tinyscope
