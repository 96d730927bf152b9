#pragma once
// Turns dataset items into normalised CHW float batches at a resolution. Unreadable images are
// skipped and reported (path and reason), never fatal. Decoding runs on worker threads.
#include "data/ImageDataset.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

struct Batch {
    std::vector<float> pixels;                 // n × 3 × r × r
    std::vector<int> labels;
    std::vector<std::size_t> items;            // dataset indices of the rows
    std::vector<std::pair<std::string, std::string>> skipped;   // (item, reason)
    int resolution = 0;
    std::size_t size() const { return labels.size(); }
};

// Per-image augmentation hook (training): called on the decoded image before resizing.
using ImageAugment = std::function<Image(const Image&, std::size_t row)>;

Batch loadBatch(const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                const Normalization& norm = {}, int threads = 2, const ImageAugment& augment = {});

}  // namespace tinyscope
