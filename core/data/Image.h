#pragma once
// An 8-bit image (HWC, 1 or 3 channels), decoding from PNG/JPEG with stb_image
// (Debian's libstb-dev), and the lab's preprocessing: resize like PIL's bilinear
// (antialiased, fixed-point, bit-exact), grey replicated to 3 channels, normalised with
// mean = std = 0.5, written as CHW floats.
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct Image {
    int width = 0, height = 0, channels = 0;   // channels 1 (grey) or 3 (RGB)
    std::vector<std::uint8_t> pixels;          // row-major HWC

    std::uint8_t at(int x, int y, int c) const
    {
        return pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) *
                          static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)];
    }
};

// Decodes a PNG or JPEG file (8 or 16 bits; other formats are refused by their first bytes,
// whatever the file is called). Alpha is dropped; grey stays 1 channel. Bounded: at most
// kMaxImageFileBytes of file and kMaxImageSide px a side, kMaxImagePixels in all, checked from the
// header before any pixel is decoded. Throws InputError "<path>: cannot decode image: <reason>".
constexpr std::size_t kMaxImageFileBytes = 64u << 20;
constexpr int kMaxImageSide = 16384;
constexpr long long kMaxImagePixels = 16'777'216;   // 4096 x 4096
Image decodeImageFile(const std::string& path);
Image decodeImage(const std::string& bytes, const std::string& source);

// PIL's Image.resize((w, h), BILINEAR) on 8-bit data, bit for bit (separable triangle filter whose
// support grows with the downscale factor, 22-bit fixed point, horizontal pass first).
Image resizeBilinear(const Image& in, int width, int height);

// Resize to r×r, grey → 3 channels, (v/255 - mean)/std per channel, CHW into out[3·r·r].
struct Normalization {
    float mean[3] = {0.5f, 0.5f, 0.5f};
    float std[3] = {0.5f, 0.5f, 0.5f};
};
void imageToTensor(const Image& img, int r, float* out, const Normalization& norm = {});

}  // namespace tinyscope
