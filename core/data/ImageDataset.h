#pragma once
// Labelled image datasets: torchvision's ImageFolder layout (class sub-folders sorted by name,
// files sorted, as the VWW data is stored) and IDX files (MNIST / Fashion-MNIST, gzip or not).
// The lab's split: split 0 takes images 0, 2, 4, ...; split 1 (holdout, used for BN calibration
// and accuracy datasets) takes 1, 3, 5, ....
#include "data/Image.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

class ImageDataset {
public:
    virtual ~ImageDataset() = default;
    virtual std::size_t size() const = 0;
    virtual int label(std::size_t i) const = 0;
    // Decodes image i; throws InputError naming the file for unreadable images.
    virtual Image image(std::size_t i) const = 0;
    virtual std::string itemName(std::size_t i) const = 0;   // path or "train-images[17]"
    // Item i as stored (the image file's bytes, or the IDX pixels with their size): what a
    // fingerprint of the data hashes. Throws InputError naming the file when it cannot be read.
    virtual std::string itemBytes(std::size_t i) const = 0;
    const std::vector<std::string>& classNames() const { return classes_; }
    const std::string& source() const { return source_; }

protected:
    std::vector<std::string> classes_;
    std::string source_;
};

class ImageFolderDataset : public ImageDataset {
public:
    // The formats the decoder reads (torchvision's IMG_EXTENSIONS minus BMP/PNM/TIFF/WebP): .jpg .jpeg .png
    // Symbolic links are followed, but a folder is read once: one reached a second time (a link
    // cycle such as class/self -> ., or two links to one folder) is refused with both paths, as
    // its images would otherwise be counted again (issue 45: 140 images became 2,940).
    explicit ImageFolderDataset(const std::string& root);
    std::size_t size() const override { return files_.size(); }
    int label(std::size_t i) const override { return labels_[i]; }
    Image image(std::size_t i) const override;
    std::string itemName(std::size_t i) const override { return files_[i]; }
    std::string itemBytes(std::size_t i) const override;

private:
    std::vector<std::string> files_;
    std::vector<int> labels_;
};

class IdxDataset : public ImageDataset {
public:
    // images: idx3-ubyte (N×H×W), labels: idx1-ubyte (N); either may be gzip-compressed.
    IdxDataset(const std::string& imagesPath, const std::string& labelsPath, std::vector<std::string> classNames = {});
    std::size_t size() const override { return labels_.size(); }
    int label(std::size_t i) const override { return labels_[i]; }
    Image image(std::size_t i) const override;
    std::string itemName(std::size_t i) const override;
    std::string itemBytes(std::size_t i) const override;
    int width() const { return w_; }
    int height() const { return h_; }
    const std::uint8_t* pixels(std::size_t i) const { return &pixels_[i * static_cast<std::size_t>(w_ * h_)]; }

private:
    std::vector<std::uint8_t> pixels_;
    std::vector<int> labels_;
    int w_ = 0, h_ = 0;
};

// A view of some items of another dataset (a split, a holdout, a slice).
class SubsetDataset : public ImageDataset {
public:
    SubsetDataset(std::shared_ptr<const ImageDataset> base, std::vector<std::size_t> indices, std::string name);
    std::size_t size() const override { return idx_.size(); }
    int label(std::size_t i) const override { return base_->label(idx_[i]); }
    Image image(std::size_t i) const override { return base_->image(idx_[i]); }
    std::string itemName(std::size_t i) const override { return base_->itemName(idx_[i]); }
    std::string itemBytes(std::size_t i) const override { return base_->itemBytes(idx_[i]); }

private:
    std::shared_ptr<const ImageDataset> base_;
    std::vector<std::size_t> idx_;
};

// Fashion-MNIST holdout: the last 5,000 of the 60,000 training images are never trained on; they
// serve BN re-calibration and accuracy datasets (as once-for-all holds out ImageNet train images).
constexpr std::size_t kFashionMnistHoldout = 5000;

// Opens a dataset from a path: a folder of class sub-folders, a folder holding IDX files
// ({train,t10k}-images-idx3-ubyte[.gz] + labels), or "fashion-mnist:<part>" for Debian's
// dataset-fashion-mnist package ("fashion-mnist:fit" = the first 55,000 training images,
// "fashion-mnist:holdout" = the last 5,000, ":train" all 60,000, ":test" the 10,000 test images). Errors say what was expected (and which package to install).
std::unique_ptr<ImageDataset> openDataset(const std::string& spec);

// Where Debian's dataset-fashion-mnist installs its files; empty if the package is missing.
std::string fashionMnistDir();
const std::vector<std::string>& fashionMnistClasses();

// A fingerprint (FNV-1a, 64 bit) of `items` of `data`, in that order: the class names and each
// item's label and stored bytes — contents, not paths, so a moved folder is the same data and an
// edited image or label is not. An unreadable item counts as "unreadable" (training skips it).
// Reads every item once: about an epoch's file reads without the decoding.
std::uint64_t contentFingerprint(const ImageDataset& data, const std::vector<std::size_t>& items);

// Indices of the lab's split: split 0 = 0, 2, 4, ...; split 1 = 1, 3, 5, ...; -1 = all.
std::vector<std::size_t> splitIndices(std::size_t n, int split);

}  // namespace tinyscope
