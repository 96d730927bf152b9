#include "data/Augment.h"

#include "Error.h"
#include "space/PyRandom.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

namespace tinyscope {

namespace {

// Python's round() on a float: half to even (nearbyint under the default rounding mode).
// random.uniform(a, b)
double uniform(PyRandom& rng, double a, double b) { return a + (b - a) * rng.random(); }

// random.randint(a, b) = a + _randbelow(b - a + 1). For a range of one value CPython still draws
// 1-bit numbers until one is 0 (PyRandom::randbelow returns 0 without a draw); do the same so that
// the stream stays in step with Python's.
int randint(PyRandom& rng, int a, int b)
{
    const auto n = static_cast<std::uint32_t>(b - a + 1);
    if (n == 1) {
        while (rng.getrandbits(1) != 0) {}
        return a;
    }
    return a + static_cast<int>(rng.randbelow(n));
}

std::string number(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

std::size_t pixelCount(const Image& img) { return static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height); }

// PIL's Image.blend for 8-bit bands (libImaging/Blend.c): in float, truncated, clipped.
std::uint8_t blend(int degenerate, int value, float factor)
{
    const float t = static_cast<float>(degenerate) + factor * static_cast<float>(value - degenerate);
    if (t <= 0.0f) return 0;
    if (t >= 255.0f) return 255;
    return static_cast<std::uint8_t>(t);
}

// PIL's "L" value of pixel i (libImaging/Convert.c, L24); a grey image is its own.
int greyAt(const Image& img, std::size_t i)
{
    const std::uint8_t* p = &img.pixels[i * static_cast<std::size_t>(img.channels)];
    if (img.channels == 1) return p[0];
    return static_cast<int>((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
}

// Image.blend(degenerate, in, factor) where the degenerate image is grey: degenerateAt(i) is the
// value of pixel i in every channel.
template <class Degenerate>
Image blendWithGrey(const Image& in, double factor, Degenerate degenerateAt)
{
    Image out = in;
    const auto f = static_cast<float>(factor);   // PIL's blend takes a C float
    const auto ch = static_cast<std::size_t>(in.channels);
    for (std::size_t i = 0, n = pixelCount(in); i < n; ++i) {
        const int d = degenerateAt(i);
        for (std::size_t c = 0; c < ch; ++c) out.pixels[i * ch + c] = blend(d, in.pixels[i * ch + c], f);
    }
    return out;
}

// One generator per (seed, epoch, item): streams chained over the three keys, so that neighbouring
// epochs and items start unrelated streams.
std::uint64_t streamSeed(std::uint64_t seed, int epoch, std::size_t item)
{
    return seedStream(seedStream(seed, static_cast<std::uint32_t>(epoch)), item);
}

}  // namespace

CropBox RandomResizedCrop::box(int width, int height, PyRandom& rng) const
{
    if (width < 1 || height < 1)
        throw InputError("random-resized crop: the image is empty (" + std::to_string(width) + "x" + std::to_string(height) + ")");
    const double area = static_cast<double>(width) * static_cast<double>(height);
    const double logMin = std::log(ratio_min), logMax = std::log(ratio_max);
    for (int attempt = 0; attempt < 10; ++attempt) {
        const double target = uniform(rng, scale_min, scale_max) * area;
        const double aspect = std::exp(uniform(rng, logMin, logMax));
        const int w = pyRound(std::sqrt(target * aspect));
        const int h = pyRound(std::sqrt(target / aspect));
        if (0 < w && w <= width && 0 < h && h <= height) {
            const int top = randint(rng, 0, height - h);
            const int left = randint(rng, 0, width - w);
            return {left, top, w, h};
        }
    }
    // The central crop, as wide a box as the ratio range allows.
    const double inRatio = static_cast<double>(width) / static_cast<double>(height);
    int w = width, h = height;
    if (inRatio < ratio_min)
        h = pyRound(w / ratio_min);
    else if (inRatio > ratio_max)
        w = pyRound(h * ratio_max);
    return {(width - w) / 2, (height - h) / 2, w, h};
}

Image cropImage(const Image& in, const CropBox& box)
{
    if (box.left < 0 || box.top < 0 || box.width < 1 || box.height < 1 || box.left + box.width > in.width ||
        box.top + box.height > in.height)
        throw InputError("crop box " + std::to_string(box.width) + "x" + std::to_string(box.height) + "+" + std::to_string(box.left) +
                         "+" + std::to_string(box.top) + " is outside the " + std::to_string(in.width) + "x" +
                         std::to_string(in.height) + " image");
    Image out;
    out.width = box.width;
    out.height = box.height;
    out.channels = in.channels;
    const auto ch = static_cast<std::size_t>(in.channels);
    const std::size_t rowBytes = static_cast<std::size_t>(box.width) * ch;
    out.pixels.resize(rowBytes * static_cast<std::size_t>(box.height));
    for (int y = 0; y < box.height; ++y) {
        const std::size_t from = (static_cast<std::size_t>(box.top + y) * static_cast<std::size_t>(in.width) + static_cast<std::size_t>(box.left)) * ch;
        std::copy_n(in.pixels.begin() + static_cast<std::ptrdiff_t>(from), rowBytes,
                    out.pixels.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y) * rowBytes));
    }
    return out;
}

Image flipHorizontal(const Image& in)
{
    Image out = in;
    const auto ch = static_cast<std::size_t>(in.channels);
    const auto w = static_cast<std::size_t>(in.width);
    for (std::size_t y = 0; y < static_cast<std::size_t>(in.height); ++y)
        for (std::size_t x = 0; x < w; ++x)
            std::copy_n(in.pixels.begin() + static_cast<std::ptrdiff_t>((y * w + x) * ch), ch,
                        out.pixels.begin() + static_cast<std::ptrdiff_t>((y * w + (w - 1 - x)) * ch));
    return out;
}

// ImageEnhance.Brightness: the degenerate image is black.
Image adjustBrightness(const Image& in, double factor)
{
    return blendWithGrey(in, factor, [](std::size_t) { return 0; });
}

// ImageEnhance.Contrast: the degenerate image is the grey image's mean, int(mean + 0.5).
Image adjustContrast(const Image& in, double factor)
{
    const std::size_t n = pixelCount(in);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += static_cast<std::uint64_t>(greyAt(in, i));
    const int mean = n ? static_cast<int>(static_cast<double>(sum) / static_cast<double>(n) + 0.5) : 0;
    return blendWithGrey(in, factor, [mean](std::size_t) { return mean; });
}

// ImageEnhance.Color: the degenerate image is the grey image.
Image adjustSaturation(const Image& in, double factor)
{
    return blendWithGrey(in, factor, [&in](std::size_t i) { return greyAt(in, i); });
}

ColorJitter::Draw ColorJitter::draw(PyRandom& rng) const
{
    Draw d;
    rng.shuffle(d.order, 3);   // random.shuffle
    auto factor = [&rng](double strength) { return strength > 0 ? uniform(rng, std::max(0.0, 1.0 - strength), 1.0 + strength) : 1.0; };
    d.brightness = factor(brightness);
    d.contrast = factor(contrast);
    d.saturation = factor(saturation);
    return d;
}

Image ColorJitter::apply(const Image& in, const Draw& d)
{
    Image out = in;
    for (Op op : d.order) {
        switch (op) {
        case Op::Brightness: out = adjustBrightness(out, d.brightness); break;
        case Op::Contrast: out = adjustContrast(out, d.contrast); break;
        case Op::Saturation: out = adjustSaturation(out, d.saturation); break;
        }
    }
    return out;
}

FineTuneAugment FineTuneAugment::none()
{
    FineTuneAugment a;
    a.enabled = false;
    return a;
}

void FineTuneAugment::check() const
{
    if (!enabled) return;
    if (!(crop_scale_min > 0.0 && crop_scale_min <= 1.0))
        throw InputError("fine-tune augmentation: crop_scale_min " + number(crop_scale_min) + " must be in (0, 1]");
    if (!(jitter >= 0.0 && std::isfinite(jitter)))
        throw InputError("fine-tune augmentation: jitter " + number(jitter) + " must be a finite number >= 0");
}

Image FineTuneAugment::apply(const Image& in, int epoch, std::size_t item, int resolution) const
{
    if (resolution < 1) throw InputError("fine-tune augmentation: resolution " + std::to_string(resolution) + " must be at least 1");
    if (!enabled) return resizeBilinear(in, resolution, resolution);
    check();
    PyRandom rng(streamSeed(seed, epoch, item));
    RandomResizedCrop crop;
    crop.scale_min = crop_scale_min;
    Image out = resizeBilinear(cropImage(in, crop.box(in.width, in.height, rng)), resolution, resolution);
    if (flip && rng.random() < 0.5) out = flipHorizontal(out);
    if (jitter > 0) out = ColorJitter::apply(out, ColorJitter{jitter, jitter, jitter}.draw(rng));
    return out;
}

ImageAugment FineTuneAugment::hook(int epoch, const std::vector<std::size_t>& items, int resolution) const
{
    check();
    return [self = *this, epoch, items, resolution](const Image& img, std::size_t row) {
        return self.apply(img, epoch, items.at(row), resolution);
    };
}

Image PadCropFlip::apply(const Image& in, int dx, int dy, bool flip, int pad)
{
    Image out = in;
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
            const int sx = x + dx - pad, sy = y + dy - pad;
            const int tx = flip ? in.width - 1 - x : x;
            for (int c = 0; c < in.channels; ++c)
                out.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(in.width) + static_cast<std::size_t>(tx)) *
                               static_cast<std::size_t>(in.channels) + static_cast<std::size_t>(c)] =
                    (sx < 0 || sy < 0 || sx >= in.width || sy >= in.height) ? 0 : in.at(sx, sy, c);
        }
    return out;
}

ImageAugment PadCropFlip::hook(std::uint64_t draw, const std::vector<std::size_t>& items) const
{
    return [self = *this, draw, items](const Image& img, std::size_t row) {
        PyRandom rng(seedStream(self.seed, (draw << 32) ^ items[row]));
        const int dx = static_cast<int>(rng.randbelow(static_cast<std::uint32_t>(2 * self.pad + 1)));
        const int dy = static_cast<int>(rng.randbelow(static_cast<std::uint32_t>(2 * self.pad + 1)));
        const bool flip = self.flip && rng.randbelow(2) == 1;
        return apply(img, dx, dy, flip, self.pad);
    };
}

}  // namespace tinyscope
