#pragma once
// The training augmentation of tiny-training's fine-tuning recipe (issue 20), in our own code.
// tiny-training builds it with timm's create_transform(input_size=128, is_training=True,
// color_jitter=configs.data_provider.color_aug) (algorithm/core/dataset/vision/transform/transform.py,
// configs/default.yaml: resize_scale 0.08, color_aug 0.4), i.e.
//   RandomResizedCrop(scale (0.08, 1), ratio (3/4, 4/3), bilinear) -> RandomHorizontalFlip(0.5)
//   -> torchvision ColorJitter(0.4, 0.4, 0.4) on the PIL image.
// Each step here reproduces that arithmetic on 8-bit images: the crop box with the calls timm makes
// on Python's `random` (PyRandom is CPython's generator), the resize with PIL's bilinear filter
// (resizeBilinear), the jitter with PIL's ImageEnhance blends. docs/FINETUNING.md "Augmentation"
// lists what deviates (one PyRandom stream per image instead of torch's generator for flip and
// jitter; evaluation is a plain resize).
#include "data/BatchLoader.h"
#include "data/Image.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tinyscope {

class PyRandom;

// A crop in pixels of the source image: columns [left, left + width), rows [top, top + height).
struct CropBox {
    int left = 0, top = 0, width = 0, height = 0;
    bool operator==(const CropBox& o) const { return left == o.left && top == o.top && width == o.width && height == o.height; }
};

// timm's RandomResizedCropAndInterpolation.get_params (= torchvision's RandomResizedCrop.get_params
// with Python's `random`): up to 10 draws of an area fraction uniform in [scale_min, scale_max] and
// an aspect ratio log-uniform in [ratio_min, ratio_max], sides rounded half to even as Python's
// round(); the first box that fits is placed uniformly (top drawn before left). When none fits,
// the central crop of the whole image clamped to the ratio range.
struct RandomResizedCrop {
    double scale_min = 0.08, scale_max = 1.0;
    double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;

    CropBox box(int width, int height, PyRandom& rng) const;
};

Image cropImage(const Image& in, const CropBox& box);
Image flipHorizontal(const Image& in);

// PIL's ImageEnhance, which torchvision's ColorJitter calls on PIL images. Each is
// Image.blend(degenerate, image, factor): out = trunc(d + factor·(v − d)) in float, clipped to
// [0, 255]. Brightness blends with black; contrast with the rounded mean of the grey image;
// saturation with the grey image. Grey = PIL's "L" conversion, (19595 R + 38470 G + 7471 B +
// 2^15) >> 16, i.e. 0.299 R + 0.587 G + 0.114 B rounded. A 1-channel image is its own grey
// image, so it gives exactly the channel of its 3-channel replication (imageToTensor replicates
// grey later); saturation leaves it unchanged.
Image adjustBrightness(const Image& in, double factor);
Image adjustContrast(const Image& in, double factor);
Image adjustSaturation(const Image& in, double factor);

// torchvision ColorJitter(brightness, contrast, saturation): each factor uniform in
// [max(0, 1 − b), 1 + b] (none drawn for 0), the three adjustments in a random order.
struct ColorJitter {
    double brightness = 0, contrast = 0, saturation = 0;

    enum class Op { Brightness, Contrast, Saturation };
    struct Draw {
        Op order[3] = {Op::Brightness, Op::Contrast, Op::Saturation};
        double brightness = 1, contrast = 1, saturation = 1;
    };
    Draw draw(PyRandom& rng) const;                      // the order first (a shuffle), then the factors
    static Image apply(const Image& in, const Draw& d);   // the three blends in d.order (a factor of 1 changes nothing)
};

// The fine-tuning recipe's augmentation as a loadBatch hook: per image, from its own PyRandom
// stream keyed by (seed, epoch, dataset item), a random-resized crop straight to the batch
// resolution, a flip with p 0.5, then the colour jitter. The same (seed, epoch, item) gives the same
// pixels whatever the batch, row or thread. `none()` is the evaluation setting: a plain resize.
struct FineTuneAugment {
    bool enabled = true;
    double crop_scale_min = 0.08;   // tiny-training data_provider.resize_scale
    double jitter = 0.4;            // tiny-training data_provider.color_aug (brightness = contrast = saturation)
    bool flip = true;
    std::uint64_t seed = 0;

    static FineTuneAugment none();

    // Throws InputError naming the field when a setting is out of range.
    void check() const;
    // One image of dataset item `item` in `epoch`, resolution × resolution.
    Image apply(const Image& in, int epoch, std::size_t item, int resolution) const;
    // The hook for loadBatch(data, items, resolution, …): row r is dataset item items[r] (the hook
    // keeps its own copy of `items`).
    ImageAugment hook(int epoch, const std::vector<std::size_t>& items, int resolution) const;
};

// The once-for-all training augmentation, which is also the pruning lab's (RandomCrop(size,
// padding) + RandomHorizontalFlip): the image padded with zeros by `pad` on every side, a crop of
// its own size at (dx, dy) in [0, 2·pad], then a horizontal flip with p 0.5 when `flip`. Per image
// from its own PyRandom stream keyed by (seed, draw, dataset item): dx, dy, then the flip, so the
// same (seed, draw, item) gives the same pixels whatever the batch, row or thread.
struct PadCropFlip {
    int pad = 2;
    bool flip = true;
    std::uint64_t seed = 0;

    static Image apply(const Image& in, int dx, int dy, bool flip, int pad);
    // The hook for loadBatch(data, items, …): row r is dataset item items[r] (a copy is kept).
    ImageAugment hook(std::uint64_t draw, const std::vector<std::size_t>& items) const;
};

}  // namespace tinyscope
